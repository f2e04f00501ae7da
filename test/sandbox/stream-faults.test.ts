// The faults that shape a body in time or size: the create-* trickle fault and the PDF faults
// (trickle, oversized, endless). Plain node:http clients (agent: false), so every socket and timer
// in play belongs to the test or to the sandbox.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { customer, invoice } from './helpers';

interface Exchange {
	response: http.IncomingMessage;
	request: http.ClientRequest;
}

/** Sends one request on a fresh connection and resolves as soon as the status and headers arrive. */
function open(
	url: string,
	init: { method?: string; key?: string; body?: unknown } = {},
): Promise<Exchange> {
	const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
	const headers: http.OutgoingHttpHeaders = {};
	if (init.key) headers.Authorization = `Bearer ${init.key}`;
	if (payload !== undefined) headers['Content-Type'] = 'application/json';
	return new Promise((resolve, reject) => {
		const request = http.request(url, {
			method: init.method ?? (payload ? 'POST' : 'GET'),
			headers,
			agent: false,
		});
		request.on('response', (response) => resolve({ response, request }));
		request.on('error', reject);
		request.end(payload);
	});
}

/** Reads the whole body, keeping the sizes of the chunks as they arrived. */
function readAll(response: http.IncomingMessage): Promise<{ body: Buffer; chunkSizes: number[] }> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		response.on('data', (chunk: Buffer) => chunks.push(chunk));
		response.on('end', () =>
			resolve({ body: Buffer.concat(chunks), chunkSizes: chunks.map((c) => c.length) }),
		);
		response.on('error', reject);
	});
}

/** Reads until `bytes` arrived, then stops; returns the first bytes and how many arrived. */
function readUntil(
	response: http.IncomingMessage,
	bytes: number,
): Promise<{ head: Buffer; received: number }> {
	return new Promise((resolve, reject) => {
		let head = Buffer.alloc(0);
		let received = 0;
		const onData = (chunk: Buffer) => {
			if (head.length < 64) head = Buffer.concat([head, chunk]).subarray(0, 64);
			received += chunk.length;
			if (received >= bytes) {
				response.off('data', onData);
				response.pause();
				resolve({ head, received });
			}
		};
		response.on('data', onData);
		response.on('error', reject);
		response.on('end', () => resolve({ head, received }));
	});
}

/**
 * The timers set through the global setTimeout from now on that have neither fired nor been cleared: the
 * sandbox's trickle and cap timers (node's own timers, jest's and AbortSignal.timeout do not go through it).
 */
function watchTimers(): Set<unknown> {
	const pending = new Set<unknown>();
	const realSetTimeout = global.setTimeout;
	const realClearTimeout = global.clearTimeout;
	const fakeSetTimeout = (
		callback: (...args: unknown[]) => void,
		ms?: number,
		...args: unknown[]
	) => {
		const handle = realSetTimeout(() => {
			pending.delete(handle);
			callback(...args);
		}, ms);
		pending.add(handle);
		return handle;
	};
	jest.spyOn(global, 'setTimeout').mockImplementation(fakeSetTimeout as typeof setTimeout);
	jest.spyOn(global, 'clearTimeout').mockImplementation((handle) => {
		pending.delete(handle);
		realClearTimeout(handle);
	});
	return pending;
}

afterEach(() => jest.restoreAllMocks());

async function until(condition: () => boolean, what: string): Promise<void> {
	for (let waited = 0; !condition(); waited += 10) {
		if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
		await new Promise<void>((resolve) => setImmediate(resolve));
		await new Promise<void>((resolve) =>
			AbortSignal.timeout(10).addEventListener('abort', () => resolve()),
		);
	}
}

/** The client hangs up mid-body: the sandbox stops writing, closes the socket and leaves no timer behind. */
async function expectCleanAbort(
	sb: Sandbox,
	exchange: Exchange,
	timers: Set<unknown>,
): Promise<void> {
	expect(sb.stats().openConnections).toBeGreaterThanOrEqual(1);
	exchange.request.destroy();
	await until(() => sb.stats().openConnections === 0, 'the sandbox to close the socket');
	expect(sb.stats().abortedResponses).toBe(1);
	// At once, not when the next scheduled write would have fired (seconds away in these tests).
	await new Promise<void>((resolve) => setImmediate(resolve));
	expect(timers.size).toBe(0);
}

/** Creates a customer and an invoice; returns the invoice's download URL. */
async function createInvoice(baseUrl: string, apiKey: string): Promise<string> {
	const created = await open(`${baseUrl}/create-customer`, { key: apiKey, body: customer(1) });
	await readAll(created.response);
	const made = await open(`${baseUrl}/create-invoice`, { key: apiKey, body: invoice('cust_1') });
	return (
		JSON.parse((await readAll(made.response)).body.toString('utf8')) as { download_url: string }
	).download_url;
}

describe('create-* trickle fault', () => {
	let sb: Sandbox;
	afterEach(async () => {
		await sb.close();
	});

	it('creates the record, sends status and headers at once, then the JSON a few bytes at a time', async () => {
		sb = await startSandbox({ trickleMs: 600, faults: { trickle: 1 } });
		const startedAt = performance.now();
		const { response } = await open(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1),
		});
		expect(response.statusCode).toBe(200);
		expect(response.headers['content-type']).toMatch(/^application\/json/);
		// The record exists before the body is through: a client that gives up now still created it.
		expect(sb.stats()).toMatchObject({ customers: 1, faults: { trickle: 1 } });
		const { body, chunkSizes } = await readAll(response);
		expect(performance.now() - startedAt).toBeGreaterThanOrEqual(500);
		expect(chunkSizes.length).toBeGreaterThanOrEqual(3);
		expect(Number(response.headers['content-length'])).toBe(body.length);
		expect(JSON.parse(body.toString('utf8'))).toEqual({
			id: 'cust_1',
			name: 'Ada1 Lovelace',
			email: 'ada1@example.com',
		});
		expect(sb.stats().abortedResponses).toBe(0);
	});

	it('trickles whatever the operation answers (here a 409) and draws only with its rate', async () => {
		sb = await startSandbox({ trickleMs: 50, faults: { trickle: 1 } });
		await readAll(
			(await open(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) })).response,
		);
		const again = await open(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1),
		});
		expect(again.response.statusCode).toBe(409);
		expect(JSON.parse((await readAll(again.response)).body.toString('utf8'))).toMatchObject({
			status: 'error',
		});
		expect(sb.stats().faults.trickle).toBe(2);
		sb.configure({ faults: { trickle: 0 } });
		await readAll(
			(await open(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(2) })).response,
		);
		expect(sb.stats().faults.trickle).toBe(2);
	});

	it('endlessPage: the record is created, then a 200 HTML page without length or end', async () => {
		sb = await startSandbox({ faults: { endlessPage: 1 } });
		const timers = watchTimers();
		const exchange = await open(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1),
		});
		expect(exchange.response.statusCode).toBe(200);
		expect(exchange.response.headers['content-type']).toBe('text/html');
		expect(exchange.response.headers['content-length']).toBeUndefined();
		// The safety cap's timer only.
		expect(timers.size).toBe(1);
		const { head, received } = await readUntil(exchange.response, 8 * 1024 * 1024);
		expect(received).toBeGreaterThanOrEqual(8 * 1024 * 1024);
		expect(head.toString('latin1')).toMatch(/^<!doctype html><html>/);
		expect(sb.stats().faults.endlessPage).toBe(1);
		expect(sb.stats().customers).toBe(1);
		await expectCleanAbort(sb, exchange, timers);
	});

	it('stops writing and clears its timer when the client hangs up', async () => {
		sb = await startSandbox({ trickleMs: 60_000, faults: { trickle: 1 } });
		const timers = watchTimers();
		const exchange = await open(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1),
		});
		expect(exchange.response.statusCode).toBe(200);
		expect(timers.size).toBe(1);
		await expectCleanAbort(sb, exchange, timers);
		expect(sb.stats().customers).toBe(1);
	});
});

describe('PDF faults', () => {
	let sb: Sandbox;
	let downloadUrl: string;
	beforeEach(async () => {
		sb = await startSandbox({ trickleMs: 600, pdfOversizeBytes: 5 * 1024 * 1024 });
		downloadUrl = await createInvoice(sb.baseUrl, sb.apiKey);
	});
	afterEach(async () => {
		await sb.close();
	});

	it('trickle: the real PDF, with its length announced at once, over trickleMs', async () => {
		const real = await readAll((await open(downloadUrl)).response);
		sb.configure({ pdfFault: 'trickle' });
		const startedAt = performance.now();
		const { response } = await open(downloadUrl);
		expect(response.statusCode).toBe(200);
		expect(response.headers['content-type']).toBe('application/pdf');
		expect(Number(response.headers['content-length'])).toBe(real.body.length);
		const trickled = await readAll(response);
		expect(performance.now() - startedAt).toBeGreaterThanOrEqual(500);
		expect(trickled.chunkSizes.length).toBeGreaterThanOrEqual(3);
		expect(trickled.body.equals(real.body)).toBe(true);
		expect(sb.stats().pdfFaults).toEqual({ trickle: 1, oversized: 0, endless: 0 });
	});

	it('oversized: Content-Length pdfOversizeBytes and exactly that many bytes, starting with %PDF-', async () => {
		sb.configure({ pdfFault: 'oversized' });
		const { response } = await open(downloadUrl);
		expect(response.statusCode).toBe(200);
		expect(response.headers['content-length']).toBe(String(5 * 1024 * 1024));
		const { body } = await readAll(response);
		expect(body.length).toBe(5 * 1024 * 1024);
		expect(body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
		expect(sb.stats()).toMatchObject({ pdfFaults: { oversized: 1 }, abortedResponses: 0 });
		await until(() => sb.stats().openConnections === 0, 'the connection to close');
	});

	it('endless: chunked, no Content-Length, bytes for as long as the client reads', async () => {
		sb.configure({ pdfFault: 'endless' });
		const timers = watchTimers();
		const exchange = await open(downloadUrl);
		expect(exchange.response.statusCode).toBe(200);
		expect(timers.size).toBe(1);
		expect(exchange.response.headers['content-length']).toBeUndefined();
		expect(exchange.response.headers['transfer-encoding']).toBe('chunked');
		const { head, received } = await readUntil(exchange.response, 8 * 1024 * 1024);
		expect(received).toBeGreaterThanOrEqual(8 * 1024 * 1024);
		expect(head.subarray(0, 5).toString('latin1')).toBe('%PDF-');
		expect(sb.stats().pdfFaults.endless).toBe(1);
		await expectCleanAbort(sb, exchange, timers);
	});

	it.each(['trickle', 'oversized'] as const)(
		'%s: a client that hangs up mid-body stops the writing and leaves nothing open',
		async (fault) => {
			sb.configure({ pdfFault: fault, trickleMs: 60_000 });
			const timers = watchTimers();
			const exchange = await open(downloadUrl);
			expect(exchange.response.statusCode).toBe(200);
			// The trickle has its timer for the next write; the oversized stream needs none.
			expect(timers.size).toBe(fault === 'trickle' ? 1 : 0);
			if (fault === 'oversized') await readUntil(exchange.response, 1024 * 1024);
			await expectCleanAbort(sb, exchange, timers);
		},
	);

	it('applies to GET only: HEAD and unknown files answer as usual', async () => {
		sb.configure({ pdfFault: 'endless' });
		const head = await open(downloadUrl, { method: 'HEAD' });
		expect(head.response.statusCode).toBe(200);
		expect(Number(head.response.headers['content-length'])).toBeLessThan(1024 * 1024);
		await readAll(head.response);
		const missing = await open(downloadUrl.replace(/inv_\d+/, 'inv_999'));
		expect(missing.response.statusCode).toBe(404);
		await readAll(missing.response);
		expect(sb.stats().pdfFaults.endless).toBe(0);
	});
});

/** Peak resident memory of a process, in bytes (Linux). */
function peakRss(pid: number): number {
	const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
	if (!match) throw new Error(`no VmHWM for process ${pid}`);
	return Number(match[1]) * 1024;
}

describe('oversized PDF memory', () => {
	it('streams without buffering: the sandbox process stays small while a slow client reads 256 MiB', async () => {
		const size = 256 * 1024 * 1024;
		const child = spawn(
			process.execPath,
			[
				'--import',
				'tsx',
				'sandbox/cli.ts',
				'--port',
				'0',
				'--pdf-fault',
				'oversized',
				'--pdf-oversize-bytes',
				String(size),
			],
			{ cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] },
		);
		try {
			const rootUrl = await new Promise<string>((resolve, reject) => {
				let out = '';
				child.stdout.on('data', (d: Buffer) => {
					out += d.toString('utf8');
					const ready = /^SANDBOX_READY (.+)$/m.exec(out);
					if (ready) resolve((JSON.parse(ready[1]) as { rootUrl: string }).rootUrl);
				});
				child.on('exit', (code) => reject(new Error(`the sandbox exited with ${code}: ${out}`)));
			});
			const downloadUrl = await createInvoice(`${rootUrl}/api/1.1/wf`, 'sandbox-key-1234');
			const before = peakRss(child.pid!);

			const { response } = await open(downloadUrl);
			expect(response.headers['content-length']).toBe(String(size));
			// A pause mid-way: a server that ignored backpressure would pile up the rest in memory now.
			const first = await readUntil(response, 1024 * 1024);
			await new Promise<void>((resolve) =>
				AbortSignal.timeout(500).addEventListener('abort', () => resolve()),
			);
			response.resume();
			let received = 0;
			response.on('data', (chunk: Buffer) => (received += chunk.length));
			await new Promise<void>((resolve, reject) => {
				response.on('end', resolve);
				response.on('error', reject);
			});
			expect(first.received + received).toBe(size);
			expect(peakRss(child.pid!) - before).toBeLessThan(48 * 1024 * 1024);
		} finally {
			child.kill('SIGTERM');
		}
	});
});
