/**
 * The PDF download's own rules: which download_url can be fetched, how a streamed answer is read (never past the
 * size limit, never a socket left open), and what counts as a PDF. The request itself goes through the client's
 * one door (request.ts), which also decides what is retried.
 */
import type { RawResponse, Sent } from './envelope';
import {
	type Attempt,
	type CallContext,
	downloadDeadlineFailure,
	type Failure,
	fileTooLarge,
	httpFailure,
	noAnswerFailure,
} from './errors';

export interface PdfDownload {
	/** The invoice that was created: every failure of the download says it exists. */
	invoiceId: string;
	/** The invoice's download_url, as the service gave it (checked here). */
	url: unknown;
	itemIndex: number;
	/** A larger file is refused at this many bytes, without reading the rest. */
	maxBytes: number;
}

export interface PdfFile {
	data: Buffer;
	contentType?: string;
}

/** Whether the service's download_url is something to fetch at all (http or https). */
export function isFetchable(url: unknown): url is string {
	return typeof url === 'string' && /^https?:\/\//i.test(url);
}

/** The failure of a download_url that is not one (`isFetchable` said no). */
export function unusableUrl(url: unknown): Failure {
	const given = JSON.stringify(url ?? null);
	return { retryable: false, message: `the service gave no usable download_url (got ${given})` };
}

/** The failure of a file that arrived whole but is not a PDF; undefined when it is one. */
export function notAPdf(file: PdfFile, url: string): Failure | undefined {
	if (file.data.subarray(0, 5).toString('latin1') === '%PDF-') return undefined;
	const message = `what came back from ${url} is not a PDF (content type ${file.contentType ?? 'unknown'}, ${file.data.length} bytes)`;
	return { retryable: false, message };
}

export interface FileLimits {
	call: CallContext;
	maxBytes: number;
	/** The Timeout option, for the message of a download cut off by it. */
	timeoutMs: number;
}

/**
 * One download attempt, from how the request ended to the file or a failure. GET is safe to repeat, so a
 * connection that broke is retryable; a file cut by the deadline or over the size limit is not.
 */
export async function receiveFile(
	sent: Sent,
	{ call, maxBytes, timeoutMs }: FileLimits,
): Promise<Attempt<PdfFile>> {
	if ('error' in sent) {
		if (sent.deadlineHit) return { ok: false, failure: downloadDeadlineFailure(timeoutMs) };
		return { ok: false, failure: noAnswerFailure(sent.error, call, { safeToRepeat: true }) };
	}
	const { raw } = sent;
	if (raw.statusCode < 200 || raw.statusCode > 299) {
		sent.abort?.();
		discard(raw.body);
		const failure = httpFailure({ httpCode: raw.statusCode, bodyKind: 'binary' }, call);
		// Only "slow down" answers keep their meaning for a file; anything else is just the file missing.
		if (failure.slowDown) return { ok: false, failure };
		const message = `${call.url} answered HTTP ${raw.statusCode}`;
		return { ok: false, failure: { httpCode: raw.statusCode, retryable: false, message } };
	}
	const body = await readAtMost(raw, maxBytes, sent.signal);
	// Refused or broken: abort the request itself, which closes the socket (destroying the body stream alone
	// leaves it open when the helper hands over a wrapper stream).
	if (!('data' in body)) sent.abort?.();
	if ('tooLarge' in body) return { ok: false, failure: fileTooLarge(maxBytes, body.announced) };
	if ('error' in body) {
		if (sent.deadline.aborted) return { ok: false, failure: downloadDeadlineFailure(timeoutMs) };
		// The execution was stopped while the file came in: not a service failure.
		if (sent.signal.aborted) throw body.error;
		return { ok: false, failure: noAnswerFailure(body.error, call, { safeToRepeat: true }) };
	}
	const contentType = raw.headers?.['content-type'];
	return {
		ok: true,
		value: { data: body.data, ...(typeof contentType === 'string' ? { contentType } : {}) },
	};
}

type Body = { data: Buffer } | { tooLarge: true; announced?: number } | { error: unknown };

/**
 * Reads a streamed body into memory, but never more than `maxBytes`: a Content-Length over the limit is
 * refused before the first byte, and a body that grows past it (no length, or a false one) is stopped there.
 * Either way the stream is destroyed, which closes the socket. An abort of `signal` (the deadline) does the same.
 */
async function readAtMost(raw: RawResponse, maxBytes: number, signal: AbortSignal): Promise<Body> {
	const { body } = raw;
	if (Buffer.isBuffer(body)) return body.length > maxBytes ? { tooLarge: true } : { data: body };
	const stream = body as NodeJS.ReadableStream & { destroy(error?: Error): void };
	const announced = Number(raw.headers?.['content-length']);
	if (Number.isFinite(announced) && announced > maxBytes) {
		stream.destroy();
		return { tooLarge: true, announced };
	}
	const stop = () => stream.destroy(new Error('The request was cut off by the deadline'));
	if (signal.aborted) stop();
	signal.addEventListener('abort', stop, { once: true });
	const chunks: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
			size += bytes.length;
			if (size > maxBytes) {
				stream.destroy();
				return { tooLarge: true };
			}
			chunks.push(bytes);
		}
	} catch (error) {
		return { error };
	} finally {
		signal.removeEventListener('abort', stop);
	}
	return { data: Buffer.concat(chunks, size) };
}

/** An answer whose body is not wanted: a stream left unread would keep its socket. */
function discard(body: unknown): void {
	const stream = body as { destroy?: () => void } | undefined;
	if (typeof stream?.destroy === 'function') stream.destroy();
}
