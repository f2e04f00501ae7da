/* eslint-disable @n8n/community-nodes/no-restricted-imports */
// The local sandbox of the Customer and Invoice Service: a real HTTP server on node:http (no framework).
// See sandbox/README.md for the behaviour and every decision the spec leaves open.
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildInvoiceEmail } from './mail';
import { renderInvoicePdf } from './pdf';
import { validateCustomer, validateInvoice, type InvoiceLine } from './validate';

export interface FaultRates {
	http500: number;
	html502: number;
	resetBefore: number;
	resetAfter: number;
	slow: number;
	/** The record is created, then the JSON body is sent a few bytes at a time over trickleMs. */
	trickle: number;
}

/** What every GET of a PDF does while set: see sandbox/README.md. */
export type PdfFault = 'trickle' | 'oversized' | 'endless';
export const PDF_FAULTS: PdfFault[] = ['trickle', 'oversized', 'endless'];

export interface SandboxOptions {
	host: string;
	port: number;
	apiKeys: string[];
	style: 'plain' | 'bubble';
	latencyMs: number;
	jitterMs: number;
	rateLimit?: { perSecond: number; burst: number };
	faults: FaultRates;
	slowMs: number;
	/** How long a trickled answer (create-* trickle fault, PDF trickle) takes to send its body. */
	trickleMs: number;
	pdfFault: PdfFault | null;
	/** Content-Length and size of the body the `oversized` PDF fault sends. */
	pdfOversizeBytes: number;
	pdfOrigin: 'same' | 'other';
	outboxDir?: string;
	seed?: number;
}

/** What startSandbox accepts: any option may be left out; faults are merged key by key over the defaults. */
export type SandboxStartOptions = Partial<Omit<SandboxOptions, 'faults'>> & {
	faults?: Partial<FaultRates>;
};

/** What POST /__admin/config (and Sandbox.configure) may change at run time. */
export interface RuntimeConfigPatch {
	style?: 'plain' | 'bubble';
	latencyMs?: number;
	jitterMs?: number;
	rateLimit?: { perSecond: number; burst: number } | null;
	faults?: Partial<FaultRates>;
	slowMs?: number;
	trickleMs?: number;
	pdfFault?: PdfFault | null;
	pdfOversizeBytes?: number;
	apiKeys?: string[];
	seed?: number | null;
}

export type FaultKind = keyof FaultRates;

export interface SandboxStats {
	requests: { total: number; byPath: Record<string, number>; byStatus: Record<string, number> };
	customers: number;
	invoices: number;
	customersByEmail: Record<string, number>;
	invoicesByCustomer: Record<string, number>;
	authHeadersSeenAtPdfHost: string[];
	// Extras beyond the contract:
	faults: Record<FaultKind, number> & { rateLimited: number };
	duplicateEmailRejections: number;
	invoiceAmountMismatches: number;
	emailsWritten: number;
	pdf: { generated: number; downloads: number; downloadsWithAuthorization: number };
	pdfFaults: Record<PdfFault, number>;
	concurrency: { current: number; max: number };
	/** Sockets currently open on the sandbox's listeners. */
	openConnections: number;
	/** Responses the client closed before they ended (trickled, oversized, endless or any other). */
	abortedResponses: number;
	internalErrors: number;
}

export interface CustomerRecord {
	id: string;
	firstName: string;
	lastName: string;
	name: string;
	email: string;
	companyName?: string;
	createdAt: string;
}

export interface InvoiceRecord {
	id: string;
	customerId: string;
	amount: number;
	currency: string;
	items: InvoiceLine[];
	itemsTotal: number;
	sendEmail: boolean;
	status: 'sent';
	downloadUrl: string;
	createdAt: string;
}

export interface Sandbox {
	rootUrl: string;
	baseUrl: string;
	apiKey: string;
	outboxDir: string;
	/** Root of the origin that serves PDFs (equals rootUrl when pdfOrigin is 'same'). */
	pdfRootUrl: string;
	stats(): SandboxStats;
	reset(): void;
	close(): Promise<void>;
	/** Same as POST /__admin/config; returns the effective options. Throws on an invalid patch. */
	configure(patch: RuntimeConfigPatch): SandboxOptions;
	/** The effective options (a copy). */
	config(): SandboxOptions;
	/** Everything stored (same as GET /__admin/records). */
	records(): { customers: CustomerRecord[]; invoices: InvoiceRecord[] };
}

export const DEFAULT_SANDBOX_BEARER = 'sandbox-key-1234';
export const API_PREFIXES = ['/api/1.1/wf/', '/version-test/api/1.1/wf/'];
const OPERATIONS = new Set(['create-customer', 'create-invoice']);
const MAX_BODY = 1024 * 1024;
const MAX_AUTH_HEADERS_KEPT = 10_000;

export const DEFAULT_OPTIONS: SandboxOptions = {
	host: '127.0.0.1',
	port: 0,
	apiKeys: [DEFAULT_SANDBOX_BEARER],
	style: 'plain',
	latencyMs: 0,
	jitterMs: 0,
	rateLimit: undefined,
	faults: { http500: 0, html502: 0, resetBefore: 0, resetAfter: 0, slow: 0, trickle: 0 },
	slowMs: 30_000,
	trickleMs: 120_000,
	pdfFault: null,
	pdfOversizeBytes: 64 * 1024 * 1024,
	pdfOrigin: 'same',
	outboxDir: undefined,
	seed: undefined,
};

// New kinds go at the end, so a seed keeps drawing the same sequence of the older ones.
const FAULT_ORDER: FaultKind[] = [
	'http500',
	'html502',
	'resetBefore',
	'resetAfter',
	'slow',
	'trickle',
];

/** mulberry32: a tiny deterministic PRNG; Math.random when no seed is given. */
export function createRng(seed?: number): () => number {
	if (seed === undefined || seed === null) return Math.random;
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

function isNonNegativeNumber(v: unknown): v is number {
	return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** Validates a full option set; throws an Error naming the bad option. */
export function checkOptions(o: SandboxOptions): void {
	if (o.style !== 'plain' && o.style !== 'bubble')
		throw new Error(`style must be 'plain' or 'bubble', got ${String(o.style)}`);
	if (o.pdfOrigin !== 'same' && o.pdfOrigin !== 'other')
		throw new Error(`pdfOrigin must be 'same' or 'other', got ${String(o.pdfOrigin)}`);
	if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
		throw new Error(`port must be an integer 0..65535, got ${o.port}`);
	if (
		!Array.isArray(o.apiKeys) ||
		o.apiKeys.length === 0 ||
		o.apiKeys.some((k) => typeof k !== 'string' || k === '' || /\s/.test(k))
	) {
		throw new Error('apiKeys must be a non-empty list of non-empty strings without whitespace');
	}
	for (const k of ['latencyMs', 'jitterMs', 'slowMs', 'trickleMs'] as const) {
		if (!isNonNegativeNumber(o[k]))
			throw new Error(`${k} must be a number >= 0, got ${String(o[k])}`);
	}
	if (o.rateLimit !== undefined) {
		const { perSecond, burst } = o.rateLimit;
		if (!(typeof perSecond === 'number' && perSecond > 0 && Number.isFinite(perSecond)))
			throw new Error(`rateLimit.perSecond must be > 0, got ${String(perSecond)}`);
		if (!(typeof burst === 'number' && burst >= 1 && Number.isFinite(burst)))
			throw new Error(`rateLimit.burst must be >= 1, got ${String(burst)}`);
	}
	let sum = 0;
	for (const k of FAULT_ORDER) {
		const r = o.faults[k];
		if (!(typeof r === 'number' && r >= 0 && r <= 1))
			throw new Error(`faults.${k} must be a rate between 0 and 1, got ${String(r)}`);
		sum += r;
	}
	const unknownFault = Object.keys(o.faults).find((k) => !FAULT_ORDER.includes(k as FaultKind));
	if (unknownFault)
		throw new Error(`unknown fault kind ${unknownFault} (known: ${FAULT_ORDER.join(', ')})`);
	if (sum > 1 + 1e-9) throw new Error(`the fault rates add up to ${sum}, more than 1`);
	if (o.pdfFault !== null && !PDF_FAULTS.includes(o.pdfFault)) {
		throw new Error(
			`pdfFault must be null or one of ${PDF_FAULTS.join(', ')}, got ${String(o.pdfFault)}`,
		);
	}
	if (!(Number.isSafeInteger(o.pdfOversizeBytes) && o.pdfOversizeBytes >= 1)) {
		throw new Error(`pdfOversizeBytes must be an integer >= 1, got ${String(o.pdfOversizeBytes)}`);
	}
	if (o.seed !== undefined && !(typeof o.seed === 'number' && Number.isFinite(o.seed)))
		throw new Error(`seed must be a number, got ${String(o.seed)}`);
}

/** Merges user options over the defaults (faults merged key by key) and validates them. */
export function resolveOptions(options: SandboxStartOptions = {}): SandboxOptions {
	const defined = Object.fromEntries(
		Object.entries(options).filter(([, v]) => v !== undefined),
	) as SandboxStartOptions;
	const o: SandboxOptions = {
		...DEFAULT_OPTIONS,
		...defined,
		apiKeys: [...(defined.apiKeys ?? DEFAULT_OPTIONS.apiKeys)],
		faults: { ...DEFAULT_OPTIONS.faults, ...(defined.faults ?? {}) },
		rateLimit: defined.rateLimit ? { ...defined.rateLimit } : undefined,
	};
	checkOptions(o);
	return o;
}

/** Applies a run-time patch to a copy of `current`; throws on unknown/immutable keys or bad values. */
export function applyPatch(current: SandboxOptions, patch: unknown): SandboxOptions {
	if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
		throw new Error('the config patch must be a JSON object');
	const p = patch as Record<string, unknown>;
	const immutable = ['host', 'port', 'pdfOrigin', 'outboxDir'].filter((k) => k in p);
	if (immutable.length)
		throw new Error(`${immutable.join(', ')} cannot be changed at run time (restart the sandbox)`);
	const allowed = [
		'style',
		'latencyMs',
		'jitterMs',
		'rateLimit',
		'faults',
		'slowMs',
		'trickleMs',
		'pdfFault',
		'pdfOversizeBytes',
		'apiKeys',
		'seed',
	];
	const unknown = Object.keys(p).filter((k) => !allowed.includes(k));
	if (unknown.length)
		throw new Error(
			`unknown config key(s): ${unknown.join(', ')} (allowed: ${allowed.join(', ')})`,
		);
	const next: SandboxOptions = {
		...current,
		apiKeys: [...current.apiKeys],
		faults: { ...current.faults },
	};
	if ('style' in p) next.style = p.style as SandboxOptions['style'];
	if ('latencyMs' in p) next.latencyMs = p.latencyMs as number;
	if ('jitterMs' in p) next.jitterMs = p.jitterMs as number;
	if ('slowMs' in p) next.slowMs = p.slowMs as number;
	if ('trickleMs' in p) next.trickleMs = p.trickleMs as number;
	if ('pdfFault' in p) next.pdfFault = p.pdfFault as PdfFault | null;
	if ('pdfOversizeBytes' in p) next.pdfOversizeBytes = p.pdfOversizeBytes as number;
	if ('apiKeys' in p) next.apiKeys = p.apiKeys as string[];
	if ('seed' in p) next.seed = p.seed === null ? undefined : (p.seed as number);
	if ('rateLimit' in p) {
		const rl = p.rateLimit as { perSecond?: unknown; burst?: unknown } | null;
		if (rl === null || rl === undefined || rl.perSecond === 0) next.rateLimit = undefined;
		else if (typeof rl !== 'object')
			throw new Error('rateLimit must be an object {perSecond, burst} or null');
		else
			next.rateLimit = {
				perSecond: rl.perSecond as number,
				burst: (rl.burst ?? rl.perSecond) as number,
			};
	}
	if ('faults' in p) {
		if (typeof p.faults !== 'object' || p.faults === null)
			throw new Error('faults must be an object');
		next.faults = { ...next.faults, ...(p.faults as Partial<FaultRates>) };
	}
	checkOptions(next);
	return next;
}

function emptyStats(): SandboxStats {
	return {
		requests: { total: 0, byPath: {}, byStatus: {} },
		customers: 0,
		invoices: 0,
		customersByEmail: {},
		invoicesByCustomer: {},
		authHeadersSeenAtPdfHost: [],
		faults: {
			http500: 0,
			html502: 0,
			resetBefore: 0,
			resetAfter: 0,
			slow: 0,
			trickle: 0,
			rateLimited: 0,
		},
		duplicateEmailRejections: 0,
		invoiceAmountMismatches: 0,
		emailsWritten: 0,
		pdf: { generated: 0, downloads: 0, downloadsWithAuthorization: 0 },
		pdfFaults: { trickle: 0, oversized: 0, endless: 0 },
		concurrency: { current: 0, max: 0 },
		openConnections: 0,
		abortedResponses: 0,
		internalErrors: 0,
	};
}

class HttpError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

class ClientGone extends Error {
	constructor() {
		super('the client closed the connection before the request was complete');
	}
}

interface Reply {
	status: number;
	body: unknown;
}

function pathnameOf(url: string | undefined): string {
	const raw = url ?? '/';
	const q = raw.search(/[?#]/);
	const p = q === -1 ? raw : raw.slice(0, q);
	try {
		return decodeURIComponent(p);
	} catch {
		return p;
	}
}

function statsPathKey(pathname: string): string {
	return pathname.startsWith('/files/') ? '/files/*' : pathname;
}

function destroySocket(socket: Socket | null | undefined): void {
	if (!socket || socket.destroyed) return;
	// A TCP RST (ECONNRESET at the client) rather than a polite FIN, when the platform allows it.
	const s = socket as Socket & { resetAndDestroy?: () => void };
	try {
		if (typeof s.resetAndDestroy === 'function') s.resetAndDestroy();
		else s.destroy();
	} catch {
		s.destroy();
	}
}

const HTML_404 =
	'<!DOCTYPE html><html><head><title>Page not found</title></head><body><h1>404</h1>' +
	'<p>This page does not exist. (Invoice Service sandbox)</p></body></html>';
const HTML_502 =
	'<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
	'<hr><center>sandbox-proxy</center>\r\n</body>\r\n</html>\r\n';
const HTML_HOME =
	'<!DOCTYPE html><html><head><title>Invoice Service sandbox</title></head><body><h1>Customer and Invoice Service (sandbox)</h1>' +
	'<p>POST /api/1.1/wf/create-customer, POST /api/1.1/wf/create-invoice (Bearer key). Admin: /__admin/stats</p></body></html>';

// Faults that stream a body: chunk sizes, the endless fault's safety cap and the filler bytes.
const STREAM_CHUNK_BYTES = 64 * 1024;
const TRICKLE_MIN_CHUNK_BYTES = 4;
const TRICKLE_MIN_INTERVAL_MS = 10;
const ENDLESS_CAP_MS = 10 * 60_000;
const ENDLESS_CAP_BYTES = 4 * 1024 ** 3;
const FILLER_CHUNK = Buffer.alloc(STREAM_CHUNK_BYTES, '% sandbox filler, not a real PDF\n');
const FIRST_FILLER_CHUNK = (() => {
	const head = Buffer.from('%PDF-1.7\n%sandbox PDF fault: filler bytes follow\n');
	return Buffer.concat([head, FILLER_CHUNK.subarray(head.length)]);
})();

/** Writes `body` a few bytes at a time, evenly spread over `durationMs`; stops when the response closes. */
function trickleBody(res: http.ServerResponse, body: Buffer, durationMs: number): void {
	const slots = Math.max(1, durationMs / TRICKLE_MIN_INTERVAL_MS);
	const chunkSize = Math.max(TRICKLE_MIN_CHUNK_BYTES, Math.ceil(body.length / slots));
	const chunkCount = Math.max(1, Math.ceil(body.length / chunkSize));
	const startedAt = Date.now();
	let index = 0;
	let timer: NodeJS.Timeout | undefined;
	const writeNext = () => {
		if (res.destroyed) return;
		const chunk = body.subarray(index * chunkSize, (index + 1) * chunkSize);
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
 * Streams `totalBytes` filler bytes starting with `%PDF-`, as fast as the client reads (waits for 'drain',
 * never holds more than one chunk), until done or the response closes. `capMs` ends it by calling `onCap`.
 */
function streamFiller(
	res: http.ServerResponse,
	totalBytes: number,
	cap?: { ms: number; onCap: () => void },
): void {
	let sent = 0;
	const pump = () => {
		while (!res.destroyed) {
			if (sent >= totalBytes) {
				res.end();
				return;
			}
			const chunk = sent === 0 ? FIRST_FILLER_CHUNK : FILLER_CHUNK;
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

class SandboxServer {
	opts: SandboxOptions;
	readonly outboxDir: string;
	private readonly main: http.Server;
	private readonly pdfHost?: http.Server;
	rootUrl = '';
	pdfRootUrl = '';
	private readonly abort = new AbortController();
	private closed = false;
	/** Sockets the sandbox itself cut (reset faults, the endless cap): their responses are not "aborted". */
	private readonly cutBySandbox = new WeakSet<Socket>();

	private customers = new Map<string, CustomerRecord>();
	private emailIndex = new Map<string, string>();
	private invoices = new Map<string, InvoiceRecord>();
	private pdfCache = new Map<string, Promise<Uint8Array>>();
	private writtenEmails = new Set<string>();
	private nextCustomer = 1;
	private nextInvoice = 1;
	private statsData = emptyStats();
	private faultRng: () => number = Math.random;
	private jitterRng: () => number = Math.random;
	private pdfJitterRng: () => number = Math.random;
	private tokens = 0;
	private tokensAt = 0;
	/** A temporary outbox the sandbox made itself is removed on close; one the caller named is kept. */
	private ownsOutbox = false;

	constructor(opts: SandboxOptions) {
		this.opts = opts;
		if (opts.outboxDir) {
			mkdirSync(opts.outboxDir, { recursive: true });
			this.outboxDir = path.resolve(opts.outboxDir);
		} else {
			this.outboxDir = mkdtempSync(path.join(os.tmpdir(), 'invoice-sandbox-outbox-'));
			this.ownsOutbox = true;
		}
		this.reseed();
		this.refillBucket();
		this.main = this.makeServer((req, res) => this.handleMain(req, res));
		if (opts.pdfOrigin === 'other')
			this.pdfHost = this.makeServer((req, res) => this.handlePdfHost(req, res));
	}

	private makeServer(
		handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
	): http.Server {
		const server = http.createServer((req, res) => {
			req.on('error', () => undefined);
			res.on('error', () => undefined);
			const socket = req.socket;
			res.once('close', () => {
				if (!res.writableFinished && !this.closed && !this.cutBySandbox.has(socket))
					this.statsData.abortedResponses++;
			});
			handler(req, res).catch((err: unknown) => this.onHandlerError(err, req, res));
		});
		server.on('clientError', (_err, socket) => {
			if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
			else socket.destroy();
		});
		server.on('connection', (socket) => {
			socket.on('error', () => undefined);
			this.statsData.openConnections++;
			socket.once('close', () => this.statsData.openConnections--);
		});
		// Long idle keep-alive (like a cloud load balancer) so a client reusing a pooled socket does not race the
		// server's idle close and see a spurious ECONNRESET that would look like an injected fault.
		server.keepAliveTimeout = 65_000;
		server.headersTimeout = 66_000;
		return server;
	}

	private onHandlerError(err: unknown, req: http.IncomingMessage, res: http.ServerResponse): void {
		// Shutting down, or the client went away mid-request: nothing to answer, nothing went wrong here.
		if (
			this.closed ||
			(err instanceof Error && err.name === 'AbortError') ||
			err instanceof ClientGone ||
			req.socket.destroyed
		) {
			destroySocket(req.socket);
			return;
		}
		this.statsData.internalErrors++;
		if (res.headersSent) {
			destroySocket(req.socket);
			return;
		}
		const message = err instanceof Error ? err.message : String(err);
		this.sendJson(res, 500, { status: 'error', message: `Sandbox internal error: ${message}` });
	}

	async listen(): Promise<void> {
		const listen = (server: http.Server, port: number) =>
			new Promise<number>((resolve, reject) => {
				server.once('error', reject);
				server.listen(port, this.opts.host, () => {
					server.off('error', reject);
					resolve((server.address() as AddressInfo).port);
				});
			});
		const hostForUrl = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
		const port = await listen(this.main, this.opts.port);
		this.rootUrl = `http://${hostForUrl}:${port}`;
		if (this.pdfHost) {
			const pdfPort = await listen(this.pdfHost, 0).catch((err: unknown) => {
				this.main.close();
				return Promise.reject(err);
			});
			this.pdfRootUrl = `http://${hostForUrl}:${pdfPort}`;
		} else {
			this.pdfRootUrl = this.rootUrl;
		}
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		this.abort.abort();
		const servers = [this.main, this.pdfHost].filter((s): s is http.Server => s !== undefined);
		await Promise.all(
			servers.map(
				(s) =>
					new Promise<void>((resolve) => {
						s.close(() => resolve());
						s.closeAllConnections();
					}),
			),
		);
		if (this.ownsOutbox) rmSync(this.outboxDir, { recursive: true, force: true });
	}

	// ---- state ---------------------------------------------------------------------------------------

	private reseed(): void {
		const seed = this.opts.seed;
		this.faultRng = createRng(seed);
		this.jitterRng = createRng(seed === undefined ? undefined : seed + 0x9e3779b9);
		this.pdfJitterRng = createRng(seed === undefined ? undefined : seed + 0x7f4a7c15);
	}

	private refillBucket(): void {
		this.tokens = this.opts.rateLimit?.burst ?? 0;
		this.tokensAt = Date.now();
	}

	reset(): void {
		this.customers.clear();
		this.emailIndex.clear();
		this.invoices.clear();
		this.pdfCache.clear();
		this.nextCustomer = 1;
		this.nextInvoice = 1;
		const { concurrency, openConnections } = this.statsData;
		this.statsData = emptyStats();
		this.statsData.concurrency.current = concurrency.current;
		this.statsData.openConnections = openConnections;
		for (const file of this.writtenEmails) {
			try {
				unlinkSync(file);
			} catch {
				// already gone
			}
		}
		this.writtenEmails.clear();
		this.reseed();
		this.refillBucket();
	}

	configure(patch: unknown): SandboxOptions {
		const next = applyPatch(this.opts, patch);
		const rateChanged = JSON.stringify(next.rateLimit) !== JSON.stringify(this.opts.rateLimit);
		const seedChanged = next.seed !== this.opts.seed;
		this.opts = next;
		if (rateChanged) this.refillBucket();
		if (seedChanged) this.reseed();
		return this.config();
	}

	config(): SandboxOptions {
		return JSON.parse(
			JSON.stringify({ ...this.opts, outboxDir: this.outboxDir }),
		) as SandboxOptions;
	}

	stats(): SandboxStats {
		return JSON.parse(JSON.stringify(this.statsData)) as SandboxStats;
	}

	records(): { customers: CustomerRecord[]; invoices: InvoiceRecord[] } {
		return JSON.parse(
			JSON.stringify({
				customers: [...this.customers.values()],
				invoices: [...this.invoices.values()],
			}),
		) as {
			customers: CustomerRecord[];
			invoices: InvoiceRecord[];
		};
	}

	// ---- plumbing ------------------------------------------------------------------------------------

	private count(pathname: string): void {
		const s = this.statsData.requests;
		s.total++;
		const key = statsPathKey(pathname);
		s.byPath[key] = (s.byPath[key] ?? 0) + 1;
	}

	private countStatus(status: number | 'reset'): void {
		const key = String(status);
		this.statsData.requests.byStatus[key] = (this.statsData.requests.byStatus[key] ?? 0) + 1;
	}

	private send(
		res: http.ServerResponse,
		status: number,
		body: string | Uint8Array,
		headers: http.OutgoingHttpHeaders,
		counted = true,
	): void {
		if (counted) this.countStatus(status);
		if (res.destroyed || res.writableEnded) return;
		const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
		res.writeHead(status, { ...headers, 'Content-Length': buf.byteLength });
		res.end(res.req.method === 'HEAD' ? undefined : buf);
	}

	/** Status and headers at once, then the body over trickleMs (the record, if any, already exists). */
	private sendTrickled(
		res: http.ServerResponse,
		status: number,
		body: string | Uint8Array,
		headers: http.OutgoingHttpHeaders,
	): void {
		this.countStatus(status);
		if (res.destroyed || res.writableEnded) return;
		const buf =
			typeof body === 'string'
				? Buffer.from(body, 'utf8')
				: Buffer.from(body.buffer, body.byteOffset, body.byteLength);
		res.writeHead(status, { ...headers, 'Content-Length': buf.byteLength });
		res.flushHeaders();
		trickleBody(res, buf, this.opts.trickleMs);
	}

	private sendJson(
		res: http.ServerResponse,
		status: number,
		body: unknown,
		headers: http.OutgoingHttpHeaders = {},
		counted = true,
	): void {
		this.send(
			res,
			status,
			JSON.stringify(body),
			{ 'Content-Type': 'application/json; charset=utf-8', ...headers },
			counted,
		);
	}

	private reset_(req: http.IncomingMessage): void {
		this.countStatus('reset');
		this.cut(req.socket);
	}

	private cut(socket: Socket): void {
		this.cutBySandbox.add(socket);
		destroySocket(socket);
	}

	private async wait(ms: number): Promise<void> {
		if (ms <= 0) return;
		await sleep(ms, undefined, { signal: this.abort.signal });
	}

	private readBody(req: http.IncomingMessage): Promise<Buffer> {
		return new Promise((resolve, reject) => {
			const chunks: Buffer[] = [];
			let size = 0;
			let tooLarge = false;
			req.on('data', (chunk: Buffer) => {
				size += chunk.length;
				if (size > MAX_BODY) tooLarge = true;
				else chunks.push(chunk);
			});
			req.on('end', () =>
				tooLarge
					? reject(new HttpError(413, `The request body is larger than ${MAX_BODY} bytes`))
					: resolve(Buffer.concat(chunks)),
			);
			req.on('error', () => reject(new ClientGone()));
			req.on('aborted', () => reject(new ClientGone()));
			req.on('close', () => {
				if (!req.complete) reject(new ClientGone());
			});
		});
	}

	/** Error body in the configured style (success bodies go through `success`). */
	private errorBody(status: number, message: string): unknown {
		if (this.opts.style === 'bubble') {
			if (status === 401) {
				return {
					error_class: 'Unauthorized',
					args: { code: 'sandbox' },
					translation: message,
					message,
				};
			}
			if (status === 400 || status === 404 || status === 413 || status === 405) {
				const kind =
					status === 404
						? 'NOT_FOUND'
						: status === 400
							? 'ERROR'
							: status === 413
								? 'TOO_LARGE'
								: 'ERROR';
				return { statusCode: status, body: { status: kind, message } };
			}
		}
		return { status: 'error', message };
	}

	private success(body: Record<string, unknown>): unknown {
		return this.opts.style === 'bubble' ? { status: 'success', response: body } : body;
	}

	private takeToken(): { ok: true } | { ok: false; retryAfter: number } {
		const rl = this.opts.rateLimit;
		if (!rl) return { ok: true };
		const now = Date.now();
		this.tokens = Math.min(rl.burst, this.tokens + ((now - this.tokensAt) / 1000) * rl.perSecond);
		this.tokensAt = now;
		if (this.tokens >= 1) {
			this.tokens -= 1;
			return { ok: true };
		}
		return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - this.tokens) / rl.perSecond)) };
	}

	private drawFault(u: number): FaultKind | undefined {
		let acc = 0;
		for (const kind of FAULT_ORDER) {
			acc += this.opts.faults[kind];
			if (u < acc) return kind;
		}
		return undefined;
	}

	private latency(u: number): number {
		const { latencyMs, jitterMs } = this.opts;
		return Math.max(0, latencyMs + (u * 2 - 1) * jitterMs);
	}

	// ---- routes --------------------------------------------------------------------------------------

	private async handleMain(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
		const pathname = pathnameOf(req.url);
		if (pathname === '/__admin' || pathname.startsWith('/__admin/'))
			return this.handleAdmin(req, res, pathname);
		this.count(pathname);

		const prefix = API_PREFIXES.find((p) => pathname.startsWith(p));
		if (prefix !== undefined) {
			const op = pathname.slice(prefix.length).replace(/\/+$/, '');
			if (!OPERATIONS.has(op)) {
				this.sendJson(res, 404, this.errorBody(404, `Workflow not found: ${op || '(empty)'}`));
				return;
			}
			if (req.method !== 'POST') {
				this.sendJson(
					res,
					405,
					this.errorBody(405, `Method ${req.method} not allowed on ${op}; use POST`),
					{ Allow: 'POST' },
				);
				return;
			}
			return this.handleCreate(op, req, res);
		}
		if (pathname.startsWith('/files/') && this.opts.pdfOrigin === 'same')
			return this.handlePdf(req, res, pathname);
		if (pathname === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
			this.send(res, 200, HTML_HOME, { 'Content-Type': 'text/html; charset=utf-8' });
			return;
		}
		this.send(res, 404, HTML_404, { 'Content-Type': 'text/html; charset=utf-8' });
	}

	private async handlePdfHost(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
		const pathname = pathnameOf(req.url);
		this.count(pathname);
		const auth = req.headers.authorization;
		if (
			auth !== undefined &&
			this.statsData.authHeadersSeenAtPdfHost.length < MAX_AUTH_HEADERS_KEPT
		) {
			this.statsData.authHeadersSeenAtPdfHost.push(auth);
		}
		if (pathname.startsWith('/files/')) return this.handlePdf(req, res, pathname);
		this.send(res, 404, HTML_404, { 'Content-Type': 'text/html; charset=utf-8' });
	}

	private async handlePdf(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		pathname: string,
	): Promise<void> {
		req.resume();
		if (req.method !== 'GET' && req.method !== 'HEAD') {
			this.sendJson(
				res,
				405,
				{ status: 'error', message: 'Use GET to download a file' },
				{ Allow: 'GET, HEAD' },
			);
			return;
		}
		const m = /^\/files\/(inv_\d+)\.pdf$/.exec(pathname);
		const invoice = m ? this.invoices.get(m[1]) : undefined;
		if (!invoice) {
			this.sendJson(res, 404, { status: 'error', message: `No such file: ${pathname}` });
			return;
		}
		await this.wait(this.latency(this.pdfJitterRng()));
		const headers = {
			'Content-Type': 'application/pdf',
			'Content-Disposition': `inline; filename="${invoice.id}.pdf"`,
			'Cache-Control': 'private, max-age=3600',
		};
		const fault = req.method === 'GET' ? this.opts.pdfFault : null;
		if (fault === 'oversized' || fault === 'endless') {
			this.countDownload(req);
			this.statsData.pdfFaults[fault]++;
			this.countStatus(200);
			if (fault === 'oversized') {
				res.writeHead(200, { ...headers, 'Content-Length': this.opts.pdfOversizeBytes });
				streamFiller(res, this.opts.pdfOversizeBytes);
			} else {
				res.writeHead(200, headers);
				streamFiller(res, ENDLESS_CAP_BYTES, {
					ms: ENDLESS_CAP_MS,
					onCap: () => this.cut(req.socket),
				});
			}
			return;
		}
		const pdf = await this.pdfFor(invoice);
		this.countDownload(req);
		if (fault === 'trickle') {
			this.statsData.pdfFaults.trickle++;
			this.sendTrickled(res, 200, pdf, headers);
			return;
		}
		this.send(res, 200, pdf, headers);
	}

	private countDownload(req: http.IncomingMessage): void {
		this.statsData.pdf.downloads++;
		if (req.headers.authorization !== undefined) this.statsData.pdf.downloadsWithAuthorization++;
	}

	private pdfFor(invoice: InvoiceRecord): Promise<Uint8Array> {
		let cached = this.pdfCache.get(invoice.id);
		if (!cached) {
			const customer = this.customers.get(invoice.customerId)!;
			cached = renderInvoicePdf({
				invoiceId: invoice.id,
				createdAt: new Date(invoice.createdAt),
				customer: {
					id: customer.id,
					name: customer.name,
					email: customer.email,
					companyName: customer.companyName,
				},
				items: invoice.items,
				amount: invoice.amount,
				currency: invoice.currency,
			});
			this.statsData.pdf.generated++;
			this.pdfCache.set(invoice.id, cached);
			cached.catch(() => this.pdfCache.delete(invoice.id));
		}
		return cached;
	}

	private async handleCreate(
		op: string,
		req: http.IncomingMessage,
		res: http.ServerResponse,
	): Promise<void> {
		// Draw first, so the fault and jitter sequences depend only on the order of create-* requests.
		const fault = this.drawFault(this.faultRng());
		const latency = this.latency(this.jitterRng());
		const conc = this.statsData.concurrency;
		conc.current++;
		conc.max = Math.max(conc.max, conc.current);
		try {
			const raw = await this.readBody(req).catch((err: unknown) =>
				err instanceof HttpError ? err : Promise.reject(err),
			);
			if (raw instanceof HttpError) {
				this.sendJson(res, raw.status, this.errorBody(raw.status, raw.message), {
					Connection: 'close',
				});
				return;
			}

			const token = this.takeToken();
			if (!token.ok) {
				this.statsData.faults.rateLimited++;
				const rl = this.opts.rateLimit!;
				this.sendJson(
					res,
					429,
					{
						status: 'error',
						message: `Rate limit exceeded (${rl.perSecond} requests per second, burst ${rl.burst}); retry after ${token.retryAfter} s`,
					},
					{ 'Retry-After': String(token.retryAfter) },
				);
				return;
			}

			if (fault === 'resetBefore') {
				this.statsData.faults.resetBefore++;
				this.reset_(req);
				return;
			}
			await this.wait(latency);
			if (fault === 'http500') {
				this.statsData.faults.http500++;
				this.sendJson(res, 500, {
					status: 'error',
					message: 'Internal server error (injected fault; nothing was processed)',
				});
				return;
			}
			if (fault === 'html502') {
				this.statsData.faults.html502++;
				this.send(res, 502, HTML_502, { 'Content-Type': 'text/html' });
				return;
			}
			if (fault === 'slow') {
				this.statsData.faults.slow++;
				await this.wait(this.opts.slowMs);
			}

			const reply = await this.process(op, req, raw);
			if (fault === 'resetAfter') {
				this.statsData.faults.resetAfter++;
				this.reset_(req);
				return;
			}
			const headers = reply.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
			if (fault === 'trickle') {
				this.statsData.faults.trickle++;
				this.sendTrickled(res, reply.status, JSON.stringify(reply.body), {
					'Content-Type': 'application/json; charset=utf-8',
					...headers,
				});
				return;
			}
			this.sendJson(res, reply.status, reply.body, headers);
		} finally {
			conc.current--;
		}
	}

	private authorized(req: http.IncomingMessage): boolean {
		const header = req.headers.authorization;
		if (typeof header !== 'string') return false;
		const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
		return m !== null && this.opts.apiKeys.includes(m[1]);
	}

	private async process(op: string, req: http.IncomingMessage, raw: Buffer): Promise<Reply> {
		if (!this.authorized(req)) {
			const message =
				req.headers.authorization === undefined
					? 'Missing API key: send the header Authorization: Bearer <API_KEY>'
					: 'Invalid or expired API token';
			return { status: 401, body: this.errorBody(401, message) };
		}
		const bad = (message: string): Reply => ({ status: 400, body: this.errorBody(400, message) });
		const ctype = String(req.headers['content-type'] ?? '');
		if (raw.length === 0) return bad('The request body is empty; expected a JSON object');
		if (ctype !== '' && !/^application\/([\w.+-]*\+)?json\b/i.test(ctype)) {
			return bad(`Unsupported Content-Type "${ctype}": send the body as application/json`);
		}
		let body: unknown;
		try {
			body = JSON.parse(raw.toString('utf8'));
		} catch (err) {
			return bad(`Invalid JSON in the request body: ${(err as Error).message}`);
		}
		return op === 'create-customer' ? this.createCustomer(body) : this.createInvoice(body);
	}

	private createCustomer(body: unknown): Reply {
		const v = validateCustomer(body);
		if (!v.ok) return { status: 400, body: this.errorBody(400, v.errors.join('; ')) };
		const key = v.value.email.toLowerCase();
		if (this.emailIndex.has(key)) {
			this.statsData.duplicateEmailRejections++;
			return {
				status: 409,
				body: { status: 'error', message: 'A customer with this email already exists' },
			};
		}
		const id = `cust_${this.nextCustomer++}`;
		const record: CustomerRecord = {
			id,
			firstName: v.value.firstName,
			lastName: v.value.lastName,
			name: `${v.value.firstName} ${v.value.lastName}`,
			email: v.value.email,
			companyName: v.value.companyName,
			createdAt: new Date().toISOString(),
		};
		this.customers.set(id, record);
		this.emailIndex.set(key, id);
		this.statsData.customers++;
		this.statsData.customersByEmail[key] = (this.statsData.customersByEmail[key] ?? 0) + 1;
		return { status: 200, body: this.success({ id, name: record.name, email: record.email }) };
	}

	private async createInvoice(body: unknown): Promise<Reply> {
		const v = validateInvoice(body, (id) => this.customers.has(id));
		if (!v.ok) return { status: 400, body: this.errorBody(400, v.errors.join('; ')) };
		const id = `inv_${this.nextInvoice++}`;
		const itemsTotal = Math.round(v.value.items.reduce((s, i) => s + i.price, 0) * 100) / 100;
		const record: InvoiceRecord = {
			id,
			customerId: v.value.customerId,
			amount: v.value.amount,
			currency: v.value.currency,
			items: v.value.items,
			itemsTotal,
			sendEmail: v.value.sendEmail,
			status: 'sent',
			downloadUrl: `${this.pdfRootUrl}/files/${id}.pdf`,
			createdAt: new Date().toISOString(),
		};
		this.invoices.set(id, record);
		this.statsData.invoices++;
		this.statsData.invoicesByCustomer[record.customerId] =
			(this.statsData.invoicesByCustomer[record.customerId] ?? 0) + 1;
		if (Math.abs(itemsTotal - record.amount) > 0.005) this.statsData.invoiceAmountMismatches++;

		if (record.sendEmail) {
			const customer = this.customers.get(record.customerId)!;
			const pdf = await this.pdfFor(record);
			const eml = buildInvoiceEmail({
				invoiceId: id,
				to: customer.email,
				toName: customer.name,
				amount: record.amount,
				currency: record.currency,
				items: record.items,
				date: new Date(record.createdAt),
				pdf,
			});
			const file = path.join(this.outboxDir, `${id}.eml`);
			await writeFile(file, eml);
			this.writtenEmails.add(file);
			this.statsData.emailsWritten++;
		}
		return {
			status: 200,
			body: this.success({
				invoice_id: id,
				status: record.status,
				download_url: record.downloadUrl,
			}),
		};
	}

	// ---- admin (no auth: a loopback dev tool) ---------------------------------------------------------

	private async handleAdmin(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		pathname: string,
	): Promise<void> {
		const route = `${req.method ?? 'GET'} ${pathname.replace(/\/+$/, '')}`;
		const raw = await this.readBody(req).catch(() => Buffer.alloc(0));
		switch (route) {
			case 'GET /__admin/stats':
				this.sendJson(res, 200, this.statsData, {}, false);
				return;
			case 'GET /__admin/records':
				this.sendJson(res, 200, this.records(), {}, false);
				return;
			case 'GET /__admin/config':
				this.sendJson(res, 200, this.config(), {}, false);
				return;
			case 'POST /__admin/reset':
				this.reset();
				this.sendJson(res, 200, { status: 'ok' }, {}, false);
				return;
			case 'POST /__admin/config': {
				let patch: unknown;
				try {
					patch = raw.length ? JSON.parse(raw.toString('utf8')) : {};
				} catch (err) {
					this.sendJson(
						res,
						400,
						{ status: 'error', message: `Invalid JSON: ${(err as Error).message}` },
						{},
						false,
					);
					return;
				}
				try {
					const config = this.configure(patch);
					this.sendJson(res, 200, { status: 'ok', config }, {}, false);
				} catch (err) {
					this.sendJson(res, 400, { status: 'error', message: (err as Error).message }, {}, false);
				}
				return;
			}
			default:
				this.sendJson(
					res,
					404,
					{
						status: 'error',
						message: `Unknown admin route ${route}; try GET /__admin/stats, GET /__admin/records, GET|POST /__admin/config, POST /__admin/reset`,
					},
					{},
					false,
				);
		}
	}
}

export async function startSandbox(options: SandboxStartOptions = {}): Promise<Sandbox> {
	const server = new SandboxServer(resolveOptions(options));
	await server.listen();
	const apiKey = server.opts.apiKeys[0];
	return {
		rootUrl: server.rootUrl,
		baseUrl: `${server.rootUrl}/api/1.1/wf`,
		apiKey,
		outboxDir: server.outboxDir,
		pdfRootUrl: server.pdfRootUrl,
		stats: () => server.stats(),
		reset: () => server.reset(),
		close: () => server.close(),
		configure: (patch) => server.configure(patch),
		config: () => server.config(),
		records: () => server.records(),
	};
}
