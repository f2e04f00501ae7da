// Timeout as a total deadline, the PDF size limit and the Base URL paste shapes, through the node's real
// execute() in an n8n-core workflow run. The service here is a real HTTP server on 127.0.0.1 (not nock), so
// that the tests can see what a client abort really does to the socket: closed, and nothing left writing.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';

import nock from 'nock';
import { sleep } from 'n8n-workflow';

import {
	API,
	API_KEY,
	customerParameters,
	everythingVisible,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

const MB = 1024 * 1024;
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const ADA = { first: 'Ada', last: 'Lovelace', email: 'ada@example.com' };

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> | void;

interface Exchange {
	method: string;
	path: string;
	/** Set when the client's socket closed before the answer ended (an abort). */
	abortedAt?: number;
	/** Set when the server stopped writing (end or abort). */
	stoppedAt?: number;
	bytesWritten: number;
}

/** A loopback service whose answers the test writes by hand; records every exchange and how it ended. */
async function startService(handlers: Record<string, Handler>) {
	const exchanges: Exchange[] = [];
	const server = http.createServer((req, res) => {
		const exchange: Exchange = { method: req.method ?? '', path: req.url ?? '', bytesWritten: 0 };
		exchanges.push(exchange);
		res.on('close', () => {
			if (!res.writableEnded) exchange.abortedAt = Date.now();
		});
		const write = res.write.bind(res);
		res.write = ((chunk: Buffer | string, ...rest: never[]) => {
			exchange.bytesWritten += Buffer.byteLength(chunk);
			return write(chunk, ...rest);
		}) as typeof res.write;
		const handler = handlers[`${req.method} ${(req.url ?? '').split('?')[0]}`];
		req.resume();
		req.on('end', async () => {
			if (!handler) {
				res.writeHead(404).end();
				return;
			}
			await handler(req, res);
			exchange.stoppedAt = Date.now();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		origin,
		exchanges,
		close: async () => {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

/** Headers at once, then `body` a few bytes at a time over `overMs`, until done or the client goes away. */
function trickle(status: number, body: Buffer, overMs: number, headers: http.OutgoingHttpHeaders) {
	return async (_req: http.IncomingMessage, res: http.ServerResponse) => {
		res.writeHead(status, { 'content-length': body.length, ...headers });
		res.flushHeaders();
		const step = 4;
		const pause = Math.max(10, Math.floor(overMs / Math.ceil(body.length / step)));
		for (let at = 0; at < body.length; at += step) {
			if (res.destroyed) return;
			res.write(body.subarray(at, at + step));
			await sleep(pause);
		}
		res.end();
	};
}

/**
 * Bytes as fast as the client reads them (backpressure kept), `total` of them or without end: a PDF, or with
 * `page` an HTML page of that size with another status (a proxy's page, an app streaming a log).
 */
function flood(
	total: number | undefined,
	headers: http.OutgoingHttpHeaders,
	page?: { status: number },
) {
	return async (_req: http.IncomingMessage, res: http.ServerResponse) => {
		res.writeHead(page?.status ?? 200, {
			'content-type': page ? 'text/html' : 'application/pdf',
			...(total !== undefined ? { 'content-length': total } : {}),
			...headers,
		});
		const chunk = Buffer.alloc(64 * 1024, 0x20);
		chunk.write(page ? '<!doctype html><html><body>' : '%PDF-');
		let sent = 0;
		while (!res.destroyed && (total === undefined || sent < total)) {
			const piece =
				total === undefined ? chunk : chunk.subarray(0, Math.min(chunk.length, total - sent));
			sent += piece.length;
			if (!res.write(piece)) {
				await new Promise<void>((resolve) => {
					const done = () => {
						res.off('drain', done);
						res.off('close', done);
						resolve();
					};
					res.once('drain', done);
					res.once('close', done);
				});
			}
		}
		if (!res.destroyed) res.end();
	};
}

const invoiceAnswer =
	(origin: string) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(
			JSON.stringify({
				invoice_id: 'inv_1',
				status: 'sent',
				download_url: `${origin}/files/inv_1.pdf`,
			}),
		);
	};

/** Waits (up to 10 s: a busy machine is slow to close sockets) for the server to see how an exchange ended. */
async function settled(exchange: Exchange | undefined): Promise<Exchange | undefined> {
	for (let wait = 0; wait < 500 && exchange && !exchange.abortedAt && !exchange.stoppedAt; wait++) {
		await sleep(20);
	}
	return exchange;
}

let service: Awaited<ReturnType<typeof startService>> | undefined;

// nock, which the other workflow tests use, wraps every response (even one it lets through) in its own stream,
// which hides what an abort does to the real socket. This file talks to its loopback server directly: nock's
// interception is switched off for it, and back on afterwards.
beforeAll(() => nock.restore());
afterAll(() => nock.activate());
afterEach(async () => {
	await service?.close();
	service = undefined;
});

const pdfParameters = (options: Record<string, unknown> = {}) =>
	invoiceParameters({ options: { downloadPdf: true, maxRetryWait: 0, ...options } });

describe('Timeout is a total deadline: headers and the whole body', () => {
	it('cuts a create whose answer trickles, never sends it again, and closes the socket', async () => {
		const answer = Buffer.from(JSON.stringify({ id: 'cust_1', name: 'Ada Lovelace' }));
		service = await startService({
			[`POST ${API}/create-customer`]: trickle(200, answer, 30_000, {
				'content-type': 'application/json',
			}),
		});
		const started = Date.now();
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { timeout: 1000 } }),
			items: [ADA],
			credentials: { baseUrl: service.origin },
		});
		const tookMs = Date.now() - started;

		expect(result.error?.message).toBe(
			'No answer from create-customer within the time-out: outcome unknown',
		);
		expect(result.error?.description).toMatch(
			/Outcome unknown: .*enter [2-9A-Z]{8} in Options → Resend Unknown Outcomes Of and retry this execution/,
		);
		expect(result.error?.description).toMatch(
			/whole answer \(headers and body\).*Timeout option \(1 s\)/,
		);
		expect(service.exchanges).toHaveLength(1);
		expect((await settled(service.exchanges[0]))?.abortedAt).toBeDefined();
		// The trickle would take 30 s; the deadline is 1 s (loose bound: a busy machine is slow).
		expect(tookMs).toBeLessThan(15_000);
		expect(everythingVisible(result)).not.toContain(API_KEY);
	});

	it('cuts a PDF that trickles and says the invoice was created', async () => {
		let origin = '';
		const slowPdf = Buffer.concat([PDF, Buffer.alloc(400, 0x20)]);
		service = await startService({
			[`POST ${API}/create-invoice`]: (req, res) => invoiceAnswer(origin)(req, res),
			'GET /files/inv_1.pdf': trickle(200, slowPdf, 30_000, { 'content-type': 'application/pdf' }),
		});
		origin = service.origin;

		const started = Date.now();
		const result = await runInvoiceService({
			parameters: pdfParameters({ timeout: 1000 }),
			credentials: { baseUrl: service.origin },
			onError: 'continueErrorOutput',
		});
		const tookMs = Date.now() - started;

		const error = result.outputs[1][0].json.error as Record<string, unknown>;
		expect(error.message).toBe(
			'Invoice inv_1 was created, but its PDF could not be downloaded: the download did not finish within the time-out (1 s)',
		);
		expect(error.description).toMatch(/Retry the failed execution .* it only downloads the PDF/);
		const downloads = service.exchanges.filter((exchange) => exchange.method === 'GET');
		expect(downloads).toHaveLength(1);
		expect((await settled(downloads[0]))?.abortedAt).toBeDefined();
		expect(tookMs).toBeLessThan(15_000);
	});
});

describe('the PDF size is bounded', () => {
	async function downloadAgainst(pdfHandler: (origin: string) => Handler, maxPdfSize: number) {
		let origin = '';
		service = await startService({
			[`POST ${API}/create-invoice`]: (req, res) => invoiceAnswer(origin)(req, res),
			'GET /files/inv_1.pdf': (req, res) => pdfHandler(origin)(req, res),
		});
		origin = service.origin;
		const result = await runInvoiceService({
			parameters: pdfParameters({ maxPdfSize }),
			credentials: { baseUrl: service.origin },
			onError: 'continueErrorOutput',
		});
		const download = await settled(service.exchanges.find((exchange) => exchange.method === 'GET'));
		return { result, download: download! };
	}

	it('refuses an announced size over the limit before reading it', async () => {
		const { result, download } = await downloadAgainst(() => flood(64 * MB, {}), 1);
		expect((result.outputs[1][0].json.error as { message: string }).message).toBe(
			'Invoice inv_1 was created, but its PDF could not be downloaded: the file is larger than the limit of 1 MB (it announced 64 MB)',
		);
		expect(download.abortedAt).toBeDefined();
		// Whatever sat in socket buffers when the client hung up, far from the 64 MB offered.
		expect(download.bytesWritten).toBeLessThan(16 * MB);
	});

	it('stops an endless download (no Content-Length) at the limit', async () => {
		const { result, download } = await downloadAgainst(() => flood(undefined, {}), 2);
		expect((result.outputs[1][0].json.error as { message: string }).message).toBe(
			'Invoice inv_1 was created, but its PDF could not be downloaded: the file is larger than the limit of 2 MB',
		);
		expect((result.outputs[1][0].json.error as { description: string }).description).toMatch(
			/stopped at the limit.*Max PDF Size/,
		);
		expect(download.abortedAt).toBeDefined();
		expect(download.bytesWritten).toBeLessThan(16 * MB);
	});

	it('accepts a PDF under the limit', async () => {
		const { result } = await downloadAgainst(() => flood(3 * MB, {}), 4);
		expect(result.error).toBeUndefined();
		expect(result.outputs[0][0].binary?.data?.fileName).toBe('inv_1.pdf');
	});

	it('a download error keeps its HTTP code and says the invoice was created', async () => {
		const { result } = await downloadAgainst(
			() => (_req, res) => {
				res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden');
			},
			50,
		);
		const error = result.outputs[1][0].json.error as Record<string, unknown>;
		expect(error.message).toMatch(
			/^Invoice inv_1 was created, but its PDF could not be downloaded: http:\/\/127\.0\.0\.1:\d+\/files\/inv_1\.pdf answered HTTP 403$/,
		);
		expect(error.httpCode).toBe('403');
	});
});

describe('every answer of the service is read with a limit (64 KB)', () => {
	const LIMIT_MESSAGE =
		/^The answer to create-customer was larger than 64 KB \(HTTP (\d+), text\/html; (.*)\)$/;

	async function createAgainst(handler: Handler, items = [ADA]) {
		service = await startService({ [`POST ${API}/create-customer`]: handler });
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { maxRetryWait: 30 } }),
			items,
			credentials: { baseUrl: service.origin },
			onError: 'continueErrorOutput',
		});
		const exchanges = await Promise.all(service.exchanges.map(settled));
		return { result, exchanges: exchanges as Exchange[] };
	}

	it.each([
		['a 200 page without end and no length', 200, undefined, 'reading stopped there'],
		['a 200 page that announces 400 MB', 200, 400 * MB, 'it announced 400 MB'],
		['a 500 page without end and no length', 500, undefined, 'reading stopped there'],
		['a 503 page that announces 400 MB (not retried)', 503, 400 * MB, 'it announced 400 MB'],
		['a 400 page without end and no length', 400, undefined, 'reading stopped there'],
	])(
		'%s: stopped at the limit, outcome unknown, socket closed',
		async (_name, status, total, size) => {
			const { result, exchanges } = await createAgainst(flood(total, {}, { status }));
			const error = result.outputs[1][0].json.error as Record<string, string>;
			const match = LIMIT_MESSAGE.exec(error.message);
			expect(match?.slice(1)).toEqual([String(status), size]);
			expect(error.description).toMatch(
				/a page of a proxy .* Check the Base URL .* Outcome unknown: .* Resend Unknown Outcomes/,
			);
			expect(error.httpCode).toBe(String(status));
			// Sent once: an unknown outcome is never sent again by itself, whatever the status says.
			expect(exchanges).toHaveLength(1);
			expect(exchanges[0].abortedAt).toBeDefined();
			// Whatever sat in socket buffers when the client hung up, far from what was offered.
			expect(exchanges[0].bytesWritten).toBeLessThan(16 * MB);
			expect(everythingVisible(result)).not.toContain(API_KEY);
		},
	);

	it('a gzip-compressed page without end is stopped at 64 KB of what it unpacks to', async () => {
		const { result, exchanges } = await createAgainst(async (_req, res) => {
			res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
			const gzip = zlib.createGzip();
			gzip.pipe(res);
			const chunk = Buffer.alloc(64 * 1024, 0x20);
			while (!res.destroyed) {
				if (!gzip.write(chunk)) await sleep(1);
			}
			gzip.destroy();
		});
		const error = result.outputs[1][0].json.error as Record<string, string>;
		expect(error.message).toMatch(LIMIT_MESSAGE);
		expect(exchanges[0].abortedAt).toBeDefined();
	});

	it('five items at once, each answered with a page without end: each stopped, each socket closed', async () => {
		const items = [1, 2, 3, 4, 5].map((n) => ({ ...ADA, email: `ada${n}@example.com` }));
		const { result, exchanges } = await createAgainst(flood(undefined, {}, { status: 200 }), items);
		expect(result.outputs[0]).toHaveLength(0);
		expect(result.outputs[1]).toHaveLength(5);
		for (const item of result.outputs[1]) {
			expect((item.json.error as { message: string }).message).toMatch(LIMIT_MESSAGE);
		}
		expect(exchanges).toHaveLength(5);
		for (const exchange of exchanges) {
			expect(exchange.abortedAt).toBeDefined();
			expect(exchange.bytesWritten).toBeLessThan(16 * MB);
		}
	});

	it('an answer just under the limit is read as usual', async () => {
		const padding = 'x'.repeat(60 * 1024);
		const { result } = await createAgainst((_req, res) => {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ id: 'cust_7', name: 'Ada Lovelace', email: ADA.email, padding }));
		});
		expect(result.outputs[1]).toHaveLength(0);
		expect(result.outputs[0][0].json.id).toBe('cust_7');
	});

	it("keeps a short text of a long error message: the service's message is cut at 500 characters", async () => {
		const message = `The e-mail is invalid. ${'Details follow. '.repeat(3000)}`;
		const { result } = await createAgainst((_req, res) => {
			res.writeHead(400, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ status: 'error', message }));
		});
		const error = result.outputs[1][0].json.error as Record<string, string>;
		// The title fits in 160 characters; the description starts with the message cut at 500.
		expect(error.message.startsWith('The e-mail is invalid. Details follow.')).toBe(true);
		expect(error.message.length).toBeLessThanOrEqual(160);
		const [quoted] = error.description.split('\n\n');
		expect(quoted.startsWith('The e-mail is invalid. Details follow.')).toBe(true);
		expect(quoted.endsWith('...')).toBe(true);
		expect(quoted.length).toBe(500);
	});
});

describe('Base URL paste mistakes', () => {
	it.each([
		[
			'a pasted create-invoice endpoint with a query string',
			'/api/1.1/wf/create-invoice?api_token=x',
		],
		['a pasted create-customer endpoint with a fragment', '/api/1.1/wf/create-customer/#top'],
		['the app root', ''],
	])('%s is understood', async (_name, suffix) => {
		service = await startService({
			[`POST ${API}/create-customer`]: (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ id: 'cust_9', name: 'Ada Lovelace', email: ADA.email }));
			},
		});
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: [ADA],
			credentials: { baseUrl: `${service.origin}${suffix}` },
		});
		expect(result.error).toBeUndefined();
		expect(service.exchanges.map((exchange) => exchange.path)).toEqual([`${API}/create-customer`]);
	});

	it("refuses Bubble's Data API before anything is sent, naming the Base URL", async () => {
		service = await startService({});
		const baseUrl = `${service.origin}/api/1.1/obj/customer`;
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: [ADA],
			credentials: { baseUrl },
		});
		const whole = `The Base URL "${baseUrl}" points to Bubble's Data API (/api/1.1/obj), but this node calls the Workflow API: use the address up to /api/1.1/wf`;
		expect(result.error?.message.length).toBeLessThanOrEqual(160);
		expect(whole.startsWith(String(result.error?.message).slice(0, -1))).toBe(true);
		expect(String(result.error?.description).startsWith(`${whole}\n\nNothing was sent.`)).toBe(
			true,
		);
		expect(service.exchanges).toHaveLength(0);
	});
});
