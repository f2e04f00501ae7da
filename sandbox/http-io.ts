// Plain HTTP plumbing with no sandbox state: reading a body, writing one whole, trickled or as a stream of
// filler bytes, cutting a socket.
import type * as http from 'node:http';
import type { Socket } from 'node:net';

export const MAX_BODY_BYTES = 1024 * 1024;

/** A request the sandbox refuses before looking at it (e.g. 413). */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

export class ClientGone extends Error {
	constructor() {
		super('the client closed the connection before the request was complete');
	}
}

/** The decoded path of a request URL, without query or fragment. */
export function pathnameOf(url: string | undefined): string {
	const raw = url ?? '/';
	const queryStart = raw.search(/[?#]/);
	const pathname = queryStart === -1 ? raw : raw.slice(0, queryStart);
	try {
		return decodeURIComponent(pathname);
	} catch {
		return pathname;
	}
}

export function destroySocket(socket: Socket | null | undefined): void {
	if (!socket || socket.destroyed) return;
	// A TCP RST (ECONNRESET at the client) rather than a polite FIN, when the platform allows it.
	const resettable = socket as Socket & { resetAndDestroy?: () => void };
	try {
		if (typeof resettable.resetAndDestroy === 'function') resettable.resetAndDestroy();
		else resettable.destroy();
	} catch {
		resettable.destroy();
	}
}

/** The whole body; rejects with HttpError 413 past MAX_BODY_BYTES, ClientGone when the client leaves. */
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		let tooLarge = false;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size > MAX_BODY_BYTES) tooLarge = true;
			else chunks.push(chunk);
		});
		req.on('end', () =>
			tooLarge
				? reject(new HttpError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes`))
				: resolve(Buffer.concat(chunks)),
		);
		req.on('error', () => reject(new ClientGone()));
		req.on('aborted', () => reject(new ClientGone()));
		req.on('close', () => {
			if (!req.complete) reject(new ClientGone());
		});
	});
}

function asBuffer(body: string | Uint8Array): Buffer {
	return typeof body === 'string'
		? Buffer.from(body, 'utf8')
		: Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** An answer ready to be written: its status, the body's text or bytes, and the headers. */
export interface Answer {
	status: number;
	body: string | Uint8Array;
	headers: http.OutgoingHttpHeaders;
}

export function jsonAnswer(
	status: number,
	body: unknown,
	headers: http.OutgoingHttpHeaders = {},
): Answer {
	const jsonHeaders = { 'Content-Type': 'application/json; charset=utf-8', ...headers };
	return { status, body: JSON.stringify(body), headers: jsonHeaders };
}

/** Status, headers with Content-Length, and the body in one go (none for HEAD). */
export function writeWhole(res: http.ServerResponse, { status, body, headers }: Answer): void {
	if (res.destroyed || res.writableEnded) return;
	const bytes = asBuffer(body);
	res.writeHead(status, { ...headers, 'Content-Length': bytes.byteLength });
	res.end(res.req.method === 'HEAD' ? undefined : bytes);
}

// Bodies shaped in time or size: chunk sizes and the filler bytes of the PDF faults.
const STREAM_CHUNK_BYTES = 64 * 1024;
const TRICKLE_MIN_CHUNK_BYTES = 4;
const TRICKLE_MIN_INTERVAL_MS = 10;
const FILLER_CHUNK = Buffer.alloc(STREAM_CHUNK_BYTES, '% sandbox filler, not a real PDF\n');
/**
 * The endless faults' safety cap (the PDF's and the endless page's): the socket is cut after this long, the body
 * ends after this many bytes.
 */
export const ENDLESS_CAP_MS = 10 * 60_000;
export const ENDLESS_CAP_BYTES = 4 * 1024 ** 3;

/** A filler chunk that starts with `head`: what the client sees first. */
function fillerStartingWith(text: string): Buffer {
	const head = Buffer.from(text);
	return Buffer.concat([head, FILLER_CHUNK.subarray(head.length)]);
}
const FIRST_FILLER_CHUNK = fillerStartingWith(
	'%PDF-1.7\n%sandbox PDF fault: filler bytes follow\n',
);
/** The first chunk of the endless page fault: an HTML page, as a proxy or an app would send it. */
export const HTML_FILLER_START = fillerStartingWith(
	'<!doctype html><html><head><title>Sandbox endless page</title></head><body><pre>\n',
);

/**
 * Status and headers (with Content-Length) at once, then the body a few bytes at a time, evenly spread over
 * `durationMs`. Stops, and clears its timer, when the response closes.
 */
export function writeTrickled(
	res: http.ServerResponse,
	{ status, body, headers }: Answer,
	durationMs: number,
): void {
	if (res.destroyed || res.writableEnded) return;
	const bytes = asBuffer(body);
	res.writeHead(status, { ...headers, 'Content-Length': bytes.byteLength });
	res.flushHeaders();
	const slots = Math.max(1, durationMs / TRICKLE_MIN_INTERVAL_MS);
	const chunkSize = Math.max(TRICKLE_MIN_CHUNK_BYTES, Math.ceil(bytes.length / slots));
	const chunkCount = Math.max(1, Math.ceil(bytes.length / chunkSize));
	const startedAt = Date.now();
	let index = 0;
	let timer: NodeJS.Timeout | undefined;
	const writeNext = () => {
		if (res.destroyed) return;
		const chunk = bytes.subarray(index * chunkSize, (index + 1) * chunkSize);
		index++;
		if (index >= chunkCount) {
			res.end(chunk);
			return;
		}
		res.write(chunk);
		scheduleNext();
	};
	const scheduleNext = () => {
		const due = startedAt + ((index + 1) * durationMs) / chunkCount;
		timer = setTimeout(writeNext, Math.max(0, due - Date.now()));
	};
	res.once('close', () => clearTimeout(timer));
	scheduleNext();
}

/**
 * Streams `totalBytes` filler bytes starting with `%PDF-` (or with `first`), as fast as the client reads (waits
 * for 'drain'; every write is one shared chunk, so nothing piles up), until done or the response closes.
 * `cap` calls `onCap` after `ms` unless the response closed first.
 */
export function streamFiller(
	res: http.ServerResponse,
	totalBytes: number,
	cap?: { ms: number; onCap: () => void },
	first: Buffer = FIRST_FILLER_CHUNK,
): void {
	let sent = 0;
	const pump = () => {
		while (!res.destroyed) {
			if (sent >= totalBytes) {
				res.end();
				return;
			}
			const chunk = sent === 0 ? first : FILLER_CHUNK;
			const piece = totalBytes - sent < chunk.length ? chunk.subarray(0, totalBytes - sent) : chunk;
			sent += piece.length;
			if (!res.write(piece)) {
				res.once('drain', pump);
				return;
			}
		}
	};
	const capTimer = cap ? setTimeout(cap.onCap, cap.ms) : undefined;
	res.once('close', () => {
		clearTimeout(capTimer);
		res.off('drain', pump);
	});
	pump();
}
