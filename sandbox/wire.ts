// The HTTP wire: the listeners (the main origin and, with pdfOrigin 'other', a second one for the PDFs), their
// sockets and errors, and the dispatch of each request by an explicit table of endpoints.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleAdmin, isAdminPath, type SandboxControl } from './admin';
import type { InvoiceFiles } from './files';
import { ClientGone, destroySocket, pathnameOf } from './http-io';
import { API_PREFIXES, type Operations } from './operations';
import type { SandboxOptions } from './options';
import type { Responder } from './responder';
import type { Counters } from './stats';

type Handler = (
	req: http.IncomingMessage,
	res: http.ServerResponse,
	pathname: string,
) => Promise<void>;

interface Endpoint {
	matches: (pathname: string, req: http.IncomingMessage) => boolean;
	/** Admin calls stay out of the request stats. */
	counted: boolean;
	handle: Handler;
}

export interface WireParts {
	control: SandboxControl;
	operations: Operations;
	files: InvoiceFiles;
}

const HTML = { 'Content-Type': 'text/html; charset=utf-8' };
const HTML_404 =
	'<!DOCTYPE html><html><head><title>Page not found</title></head><body><h1>404</h1>' +
	'<p>This page does not exist. (Invoice Service sandbox)</p></body></html>';
const HTML_HOME =
	'<!DOCTYPE html><html><head><title>Invoice Service sandbox</title></head><body><h1>Customer and Invoice Service (sandbox)</h1>' +
	'<p>POST /api/1.1/wf/create-customer, POST /api/1.1/wf/create-invoice (Bearer key). Admin: /__admin/stats</p></body></html>';

/** The operation name of a path under an API prefix (trailing slashes dropped), or undefined. */
function workflowName(pathname: string): string | undefined {
	const prefix = API_PREFIXES.find((candidate) => pathname.startsWith(candidate));
	return prefix === undefined ? undefined : pathname.slice(prefix.length).replace(/\/+$/, '');
}

/** A wait of `ms` that rejects with an AbortError when `signal` aborts (the sandbox closes). */
export function abortableWait(signal: AbortSignal): (ms: number) => Promise<void> {
	return async (ms) => {
		if (ms <= 0) return;
		await sleep(ms, undefined, { signal });
	};
}

export class Wire {
	rootUrl = '';
	pdfRootUrl = '';
	private readonly main: http.Server;
	private readonly pdfHost?: http.Server;
	private closed = false;

	constructor(
		private readonly startOptions: SandboxOptions,
		/** Aborted on close, which ends every pending wait. */
		private readonly shutdown: AbortController,
		private readonly counters: Counters,
		private readonly responder: Responder,
		parts: WireParts,
	) {
		const files: Endpoint = {
			matches: (pathname) => pathname.startsWith('/files/'),
			counted: true,
			handle: (req, res, pathname) => parts.files.handle(req, res, pathname),
		};
		const mainEndpoints: Endpoint[] = [
			{
				matches: isAdminPath,
				counted: false,
				handle: (req, res, pathname) => handleAdmin(parts.control, req, res, pathname),
			},
			{
				matches: (pathname) => workflowName(pathname) !== undefined,
				counted: true,
				handle: (req, res, pathname) => parts.operations.handle(req, res, workflowName(pathname)!),
			},
			...(startOptions.pdfOrigin === 'same' ? [files] : []),
			{
				matches: (pathname, req) =>
					pathname === '/' && (req.method === 'GET' || req.method === 'HEAD'),
				counted: true,
				handle: async (_req, res) =>
					this.responder.send(res, { status: 200, body: HTML_HOME, headers: HTML }),
			},
		];
		this.main = this.makeServer(mainEndpoints);
		if (startOptions.pdfOrigin === 'other') {
			this.pdfHost = this.makeServer([files], (req) => {
				const header = req.headers.authorization;
				if (header !== undefined) this.counters.recordAuthHeaderAtPdfHost(header);
			});
		}
	}

	private async dispatch(
		endpoints: Endpoint[],
		req: http.IncomingMessage,
		res: http.ServerResponse,
		seen?: (req: http.IncomingMessage) => void,
	): Promise<void> {
		const pathname = pathnameOf(req.url);
		const endpoint = endpoints.find((candidate) => candidate.matches(pathname, req));
		if (endpoint?.counted !== false) {
			this.counters.countRequest(pathname);
			seen?.(req);
		}
		if (endpoint) return endpoint.handle(req, res, pathname);
		this.responder.send(res, { status: 404, body: HTML_404, headers: HTML });
	}

	private makeServer(
		endpoints: Endpoint[],
		seen?: (req: http.IncomingMessage) => void,
	): http.Server {
		const server = http.createServer((req, res) => {
			req.on('error', () => undefined);
			res.on('error', () => undefined);
			const socket = req.socket;
			res.once('close', () => {
				const cut = this.closed || this.responder.wasCutOnPurpose(socket);
				if (!res.writableFinished && !cut) this.counters.current.abortedResponses++;
			});
			this.dispatch(endpoints, req, res, seen).catch((err: unknown) =>
				this.onHandlerError(err, req, res),
			);
		});
		server.on('clientError', (_err, socket) => {
			if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
			else socket.destroy();
		});
		server.on('connection', (socket) => {
			socket.on('error', () => undefined);
			this.counters.current.openConnections++;
			socket.once('close', () => this.counters.current.openConnections--);
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
		this.counters.current.internalErrors++;
		if (res.headersSent) {
			destroySocket(req.socket);
			return;
		}
		const message = err instanceof Error ? err.message : String(err);
		this.responder.json(res, 500, {
			status: 'error',
			message: `Sandbox internal error: ${message}`,
		});
	}

	async listen(): Promise<void> {
		const { host, port } = this.startOptions;
		const listenOn = (server: http.Server, wantedPort: number) =>
			new Promise<number>((resolve, reject) => {
				server.once('error', reject);
				server.listen(wantedPort, host, () => {
					server.off('error', reject);
					resolve((server.address() as AddressInfo).port);
				});
			});
		const hostForUrl = host.includes(':') ? `[${host}]` : host;
		this.rootUrl = `http://${hostForUrl}:${await listenOn(this.main, port)}`;
		if (this.pdfHost) {
			const pdfPort = await listenOn(this.pdfHost, 0).catch((err: unknown) => {
				this.main.close();
				return Promise.reject(err);
			});
			this.pdfRootUrl = `http://${hostForUrl}:${pdfPort}`;
		} else {
			this.pdfRootUrl = this.rootUrl;
		}
	}

	/** Aborts pending waits and drops open connections; resolves when every listener is closed. */
	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		this.shutdown.abort();
		const servers = [this.main, this.pdfHost].filter((server) => server !== undefined);
		await Promise.all(
			servers.map(
				(server) =>
					new Promise<void>((resolve) => {
						server.close(() => resolve());
						server.closeAllConnections();
					}),
			),
		);
	}

	get isClosed(): boolean {
		return this.closed;
	}
}
