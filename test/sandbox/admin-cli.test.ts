import { parseCliConfig } from '../../sandbox/config';
import { runCli } from '../../sandbox/run';
import { resolveOptions, startSandbox, type Sandbox } from '../../sandbox/server';
import { call, customer, invoice } from './helpers';

describe('admin endpoints', () => {
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await startSandbox();
	});
	afterAll(async () => {
		await sb.close();
	});

	it('GET /__admin/stats has the contract shape and is not counted itself', async () => {
		sb.reset();
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		await call(`${sb.baseUrl}/create-invoice`, { key: sb.apiKey, body: invoice('cust_1') });
		await call(`${sb.baseUrl}/create-invoice`, { key: 'nope', body: invoice('cust_1') });
		const res = await call(`${sb.rootUrl}/__admin/stats`);
		expect(res.status).toBe(200);
		expect(res.json).toMatchObject({
			requests: {
				total: 4,
				byPath: { '/api/1.1/wf/create-customer': 2, '/api/1.1/wf/create-invoice': 2 },
				byStatus: { '200': 2, '409': 1, '401': 1 },
			},
			customers: 1,
			invoices: 1,
			customersByEmail: { 'ada1@example.com': 1 },
			invoicesByCustomer: { cust_1: 1 },
			authHeadersSeenAtPdfHost: [],
		});
		expect(sb.stats()).toEqual((await call(`${sb.rootUrl}/__admin/stats`)).json);
	});

	it('POST /__admin/reset clears records, counters and ids', async () => {
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(5) });
		const res = await call(`${sb.rootUrl}/__admin/reset`, { method: 'POST' });
		expect(res.status).toBe(200);
		const s = sb.stats();
		expect(s.requests.total).toBe(0);
		expect(s.customers).toBe(0);
		expect(s.customersByEmail).toEqual({});
		expect(sb.records()).toEqual({ customers: [], invoices: [] });
		const again = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(5),
		});
		expect(again.json.id).toBe('cust_1');
	});

	it('POST /__admin/config changes style, latency, rate limit and faults at run time', async () => {
		sb.reset();
		const res = await call(`${sb.rootUrl}/__admin/config`, {
			body: { style: 'bubble', rateLimit: { perSecond: 1, burst: 1 }, faults: { http500: 0 } },
		});
		expect(res.status).toBe(200);
		expect(res.json.config).toMatchObject({
			style: 'bubble',
			rateLimit: { perSecond: 1, burst: 1 },
		});
		const first = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1),
		});
		expect(first.json).toMatchObject({ status: 'success', response: { id: 'cust_1' } });
		expect(
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(2) })).status,
		).toBe(429);

		const back = await call(`${sb.rootUrl}/__admin/config`, {
			body: { style: 'plain', rateLimit: null },
		});
		expect(back.json.config.rateLimit).toBeUndefined();
		expect(
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(3) })).json,
		).toEqual({
			id: 'cust_2',
			name: 'Ada3 Lovelace',
			email: 'ada3@example.com',
		});
		expect((await call(`${sb.rootUrl}/__admin/config`)).json.style).toBe('plain');
	});

	it('POST /__admin/config sets the stream faults; GET /__admin/stats reports them and the open sockets', async () => {
		sb.reset();
		const patch = {
			pdfFault: 'oversized',
			pdfOversizeBytes: 2048,
			trickleMs: 10,
			faults: { trickle: 0.5 },
		};
		const res = await call(`${sb.rootUrl}/__admin/config`, { body: patch });
		expect(res.status).toBe(200);
		expect(res.json.config).toMatchObject({ ...patch, faults: { http500: 0, trickle: 0.5 } });
		const cleared = await call(`${sb.rootUrl}/__admin/config`, {
			body: { pdfFault: null, faults: { trickle: 0 } },
		});
		expect(cleared.json.config).toMatchObject({ pdfFault: null, pdfOversizeBytes: 2048 });
		const stats = (await call(`${sb.rootUrl}/__admin/stats`)).json;
		expect(stats).toMatchObject({
			abortedResponses: 0,
			pdfFaults: { trickle: 0, oversized: 0, endless: 0 },
			faults: { trickle: 0 },
		});
		// The admin request's own socket is open while it is answered.
		expect(stats.openConnections).toBeGreaterThanOrEqual(1);
	});

	it.each([
		[{ port: 1 }, 'port'],
		[{ pdfOrigin: 'other' }, 'pdfOrigin'],
		[{ styl: 'bubble' }, 'styl'],
		[{ style: 'xml' }, 'style'],
		[{ faults: { http500: 2 } }, 'http500'],
		[{ faults: { http500: 0.6, html502: 0.6 } }, 'add up'],
		[{ faults: { meteor: 0.1 } }, 'meteor'],
		[{ latencyMs: -1 }, 'latencyMs'],
		[{ trickleMs: -1 }, 'trickleMs'],
		[{ pdfFault: 'slowly' }, 'pdfFault'],
		[{ pdfOversizeBytes: 0 }, 'pdfOversizeBytes'],
		[{ faults: { trickle: 0.6, slow: 0.6 } }, 'add up'],
	])('rejects the patch %j with 400 naming %s', async (patch, word) => {
		const before = sb.config();
		const res = await call(`${sb.rootUrl}/__admin/config`, { body: patch });
		expect(res.status).toBe(400);
		expect(res.json.message).toContain(word);
		expect(sb.config()).toEqual(before);
	});

	it('answers 400 for malformed admin JSON and 404 for unknown admin routes', async () => {
		expect((await call(`${sb.rootUrl}/__admin/config`, { raw: '{oops' })).status).toBe(400);
		expect((await call(`${sb.rootUrl}/__admin/nothing`)).status).toBe(404);
	});
});

describe('options', () => {
	it('uses the contract defaults', () => {
		const o = resolveOptions();
		expect(o).toMatchObject({
			host: '127.0.0.1',
			port: 0,
			apiKeys: ['sandbox-key-1234'],
			style: 'plain',
			pdfOrigin: 'same',
			slowMs: 30000,
		});
		expect(o.faults).toEqual({
			http500: 0,
			html502: 0,
			resetBefore: 0,
			resetAfter: 0,
			slow: 0,
			trickle: 0,
			endlessPage: 0,
		});
		expect(o).toMatchObject({
			trickleMs: 120000,
			pdfFault: null,
			pdfOversizeBytes: 64 * 1024 * 1024,
		});
		expect(o.rateLimit).toBeUndefined();
	});

	it('rejects invalid options at start', async () => {
		await expect(startSandbox({ style: 'soap' as never })).rejects.toThrow(/style/);
		await expect(startSandbox({ apiKeys: [] })).rejects.toThrow(/apiKeys/);
	});
});

describe('CLI configuration', () => {
	it('reads SANDBOX_* env and lets flags win', () => {
		const o = parseCliConfig(
			[
				'--style',
				'bubble',
				'--latency=40',
				'--fault-500',
				'0.02',
				'--burst',
				'10',
				'--key',
				'k-one,k-two',
			],
			{
				SANDBOX_STYLE: 'plain',
				SANDBOX_PORT: '8787',
				SANDBOX_RATE: '50',
				SANDBOX_FAULT_RESET_AFTER: '0.01',
				SANDBOX_PDF_ORIGIN: 'other',
				SANDBOX_SEED: '3',
			},
		);
		expect(o).toEqual({
			style: 'bubble',
			port: 8787,
			latencyMs: 40,
			rateLimit: { perSecond: 50, burst: 10 },
			faults: { resetAfter: 0.01, http500: 0.02 },
			pdfOrigin: 'other',
			seed: 3,
			apiKeys: ['k-one', 'k-two'],
		});
		expect(parseCliConfig(['--rate', '5'], {}).rateLimit).toEqual({ perSecond: 5, burst: 5 });
		expect(
			parseCliConfig(
				['--fault-trickle', '0.1', '--pdf-fault=endless', '--pdf-oversize-bytes', '1024'],
				{
					SANDBOX_TRICKLE_MS: '500',
					SANDBOX_FAULT_TRICKLE: '0.5',
					SANDBOX_PDF_FAULT: 'trickle',
				},
			),
		).toEqual({
			trickleMs: 500,
			faults: { trickle: 0.1 },
			pdfFault: 'endless',
			pdfOversizeBytes: 1024,
		});
		expect(
			parseCliConfig(['--pdf-fault', 'none'], { SANDBOX_PDF_FAULT: 'oversized' }).pdfFault,
		).toBeNull();
		expect(parseCliConfig(['--rate', '0'], { SANDBOX_RATE: '5' }).rateLimit).toBeUndefined();
	});

	it.each([
		[['--nope', '1']],
		[['--style', 'xml']],
		[['--fault-502', '1.5']],
		[['--port']],
		[['--port', 'abc']],
		[['--pdf-fault', 'slowly']],
		[['--pdf-oversize-bytes', '1.5']],
		[['--trickle-ms', '-1']],
	])('rejects %j', (argv) => {
		expect(() => parseCliConfig(argv, {})).toThrow();
	});

	it('starts, prints its config, base URL and key, serves, and closes cleanly when stopped', async () => {
		const lines: string[] = [];
		const io = { log: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
		const running = await runCli(
			['--port', '0', '--style', 'bubble', '--key', 'cli-key'],
			{ SANDBOX_LATENCY: '1' },
			io,
		);
		if (typeof running === 'number')
			throw new Error(`runCli returned exit code ${running}: ${lines.join('\n')}`);
		const out = lines.join('\n');
		const ready = JSON.parse(/^SANDBOX_READY (.+)$/m.exec(out)![1]) as {
			baseUrl: string;
			apiKey: string;
		};
		expect(out).toContain('"style":"bubble"');
		expect(out).toContain('"latencyMs":1');
		expect(out).toContain(`base URL: ${ready.baseUrl}`);
		expect(out).toContain('API key:  cli-key');
		expect(ready).toMatchObject({ baseUrl: running.sandbox.baseUrl, apiKey: 'cli-key' });
		const res = await call(`${ready.baseUrl}/create-customer`, {
			key: 'cli-key',
			body: customer(1),
		});
		expect(res.json).toMatchObject({ status: 'success', response: { id: 'cust_1' } });
		await Promise.all([running.stop('SIGTERM'), running.stop('SIGINT')]);
		expect(lines.filter((l) => l.includes('received; closing'))).toEqual([
			'sandbox: SIGTERM received; closing (served 1 requests, 1 customers, 0 invoices)',
		]);
		await expect(fetch(ready.baseUrl)).rejects.toThrow();
	});

	it('prints usage for --help and exits 2 on a bad flag', async () => {
		const lines: string[] = [];
		const io = { log: (l: string) => lines.push(l), error: (l: string) => lines.push(`ERR ${l}`) };
		expect(await runCli(['--help'], {}, io)).toBe(0);
		expect(lines.join('\n')).toContain('SANDBOX_FAULT_RESET_AFTER');
		expect(await runCli(['--fault-slow', 'lots'], {}, io)).toBe(2);
		expect(lines[lines.length - 1]).toMatch(/^ERR sandbox: --fault-slow/);
	});
});
