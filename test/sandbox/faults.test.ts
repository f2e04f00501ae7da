import { connect } from 'node:net';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { call, customer, invoice } from './helpers';

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
	const t0 = performance.now();
	const value = await fn();
	return { ms: performance.now() - t0, value };
}

/** Sends raw bytes over TCP and returns whatever the server answers until it closes (or 2 s pass). */
function rawExchange(
	rootUrl: string,
	payload: string,
	{ closeAfterWrite = false } = {},
): Promise<string> {
	const { hostname, port } = new URL(rootUrl);
	return new Promise((resolve) => {
		const socket = connect(Number(port), hostname);
		let data = '';
		const timer = AbortSignal.timeout(2000);
		timer.addEventListener('abort', () => {
			socket.destroy();
			resolve(data);
		});
		socket.on('connect', () => {
			socket.write(payload);
			if (closeAfterWrite) socket.destroy();
		});
		socket.on('data', (d) => (data += d.toString('latin1')));
		socket.on('error', () => undefined);
		socket.on('close', () => resolve(data));
	});
}

describe('a key revoked mid-run (revokeKeysAfter)', () => {
	let sb: Sandbox;
	afterEach(async () => {
		await sb.close();
	});

	it('accepts the key for N create requests, then answers 401; a new setting or a reset counts again', async () => {
		sb = await startSandbox({ revokeKeysAfter: 2 });
		const create = async (n: number) =>
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(n) })).status;
		expect([await create(1), await create(2), await create(3), await create(4)]).toEqual([
			200, 200, 401, 401,
		]);
		expect(sb.stats().customers).toBe(2);
		sb.configure({ revokeKeysAfter: 1 });
		expect([await create(5), await create(6)]).toEqual([200, 401]);
		sb.reset();
		expect(await create(7)).toBe(200);
		sb.configure({ revokeKeysAfter: null });
		expect([await create(8), await create(9)]).toEqual([200, 200]);
	});
});

describe('rate limit', () => {
	let sb: Sandbox;
	afterEach(async () => {
		await sb.close();
	});

	it('answers 429 with an integer Retry-After once the bucket is empty; admin and PDFs are not limited', async () => {
		sb = await startSandbox({ rateLimit: { perSecond: 0.5, burst: 2 } });
		expect(
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) })).status,
		).toBe(200);
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1'),
		});
		expect(inv.status).toBe(200);
		const limited = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(2),
		});
		expect(limited.status).toBe(429);
		expect(limited.headers.get('retry-after')).toBe('2');
		expect(limited.json).toEqual({
			status: 'error',
			message: expect.stringMatching(/rate limit/i),
		});
		expect(sb.stats().customers).toBe(1);
		expect(sb.stats().faults.rateLimited).toBe(1);
		expect(sb.stats().requests.byStatus['429']).toBe(1);

		expect((await fetch(String(inv.json.download_url))).status).toBe(200);
		expect((await call(`${sb.rootUrl}/__admin/stats`)).status).toBe(200);
	});

	it('refills at perSecond and never says Retry-After 0', async () => {
		sb = await startSandbox({ rateLimit: { perSecond: 20, burst: 1 } });
		const statuses: number[] = [];
		const retryAfter: string[] = [];
		for (let i = 0; i < 4; i++) {
			const res = await call(`${sb.baseUrl}/create-customer`, {
				key: sb.apiKey,
				body: customer(i),
			});
			statuses.push(res.status);
			if (res.status === 429) retryAfter.push(res.headers.get('retry-after')!);
		}
		expect(statuses[0]).toBe(200);
		expect(statuses).toContain(429);
		expect(retryAfter.every((v) => /^[1-9]\d*$/.test(v))).toBe(true);
		await new Promise<void>((resolve) =>
			AbortSignal.timeout(120).addEventListener('abort', () => resolve()),
		);
		expect(
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(9) })).status,
		).toBe(200);
	});
});

describe('faults', () => {
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await startSandbox({ slowMs: 300 });
	});
	afterAll(async () => {
		await sb.close();
	});
	beforeEach(() => {
		sb.configure({ faults: { http500: 0, html502: 0, resetBefore: 0, resetAfter: 0, slow: 0 } });
		sb.reset();
	});

	const create = (n = 1) =>
		call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(n) });

	it('http500: a JSON 500 and nothing created', async () => {
		sb.configure({ faults: { http500: 1 } });
		const res = await create();
		expect(res.status).toBe(500);
		expect(res.json).toEqual({ status: 'error', message: expect.any(String) });
		expect(sb.stats().customers).toBe(0);
		expect(sb.stats().faults.http500).toBe(1);
	});

	it('html502: an HTML 502 page and nothing created', async () => {
		sb.configure({ faults: { html502: 1 } });
		const res = await create();
		expect(res.status).toBe(502);
		expect(res.headers.get('content-type')).toMatch(/^text\/html/);
		expect(res.text).toContain('502 Bad Gateway');
		expect(sb.stats().customers).toBe(0);
	});

	it('resetBefore: the connection is reset and nothing is created', async () => {
		sb.configure({ faults: { resetBefore: 1 } });
		await expect(create()).rejects.toThrow();
		expect(sb.stats().customers).toBe(0);
		expect(sb.stats().requests.byStatus.reset).toBe(1);
		expect(sb.stats().faults.resetBefore).toBe(1);
	});

	it('resetAfter: the connection is reset but the customer exists (a retry gets 409)', async () => {
		sb.configure({ faults: { resetAfter: 1 } });
		await expect(create()).rejects.toThrow();
		expect(sb.stats().customers).toBe(1);
		expect(sb.stats().faults.resetAfter).toBe(1);
		sb.configure({ faults: { resetAfter: 0 } });
		expect((await create()).status).toBe(409);
	});

	it('slow: waits slowMs, then answers normally', async () => {
		sb.configure({ faults: { slow: 1 } });
		const { ms, value } = await timed(() => create());
		expect(value.status).toBe(200);
		expect(ms).toBeGreaterThanOrEqual(280);
		expect(sb.stats().faults.slow).toBe(1);
	});

	it('does not apply to admin or PDF routes', async () => {
		await create();
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1'),
		});
		sb.configure({ faults: { http500: 0.5, resetBefore: 0.5 } });
		for (let i = 0; i < 5; i++) {
			expect((await fetch(String(inv.json.download_url))).status).toBe(200);
			expect((await call(`${sb.rootUrl}/__admin/stats`)).status).toBe(200);
		}
	});

	it('draws deterministically from the seed', async () => {
		const run = async () => {
			const s = await startSandbox({
				seed: 42,
				faults: { http500: 0.3, html502: 0.2, resetBefore: 0, resetAfter: 0, slow: 0 },
			});
			const statuses: number[] = [];
			for (let i = 0; i < 30; i++)
				statuses.push(
					(await call(`${s.baseUrl}/create-customer`, { key: s.apiKey, body: customer(i) })).status,
				);
			await s.close();
			return statuses;
		};
		const a = await run();
		const b = await run();
		expect(a).toEqual(b);
		expect(new Set(a)).toEqual(new Set([200, 500, 502]));
	});

	it('close() does not wait for a pending slow answer', async () => {
		const s = await startSandbox({
			slowMs: 60_000,
			faults: { http500: 0, html502: 0, resetBefore: 0, resetAfter: 0, slow: 1 },
		});
		const pending = call(`${s.baseUrl}/create-customer`, { key: s.apiKey, body: customer(1) }).then(
			() => 'answered',
			() => 'connection closed',
		);
		await new Promise<void>((resolve) =>
			AbortSignal.timeout(50).addEventListener('abort', () => resolve()),
		);
		const { ms } = await timed(() => s.close());
		expect(ms).toBeLessThan(1000);
		expect(await pending).toBe('connection closed');
	});
});

describe('a fault for one chosen request (faultOnce)', () => {
	let sb: Sandbox;
	beforeEach(async () => {
		sb = await startSandbox();
	});
	afterEach(async () => {
		await sb.close();
	});

	const create = (n: number) =>
		call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(n) });

	it('refuse: the matching request gets a 400 and nothing is created, once; other requests are untouched', async () => {
		sb.faultOnce({ bodyContains: 'ada2@', fault: 'refuse' });
		expect((await create(1)).status).toBe(200);
		const refused = await create(2);
		expect(refused.status).toBe(400);
		expect(refused.json).toEqual({ status: 'error', message: expect.stringMatching(/^Refused/) });
		expect(sb.stats().customersByEmail['ada2@example.com']).toBeUndefined();
		// Fired once: the same request now goes through.
		expect((await create(2)).status).toBe(200);
		expect(sb.stats().faults.refused).toBe(1);
		expect(sb.stats().customers).toBe(2);
	});

	it('any fault kind, each rule once, in the order armed; resetAfter creates the record and cuts the answer', async () => {
		sb.faultOnce({ bodyContains: 'ada1@', fault: 'http500' });
		sb.faultOnce({ bodyContains: 'ada1@', fault: 'resetAfter' });
		expect((await create(1)).status).toBe(500);
		await expect(create(1)).rejects.toThrow();
		expect((await create(1)).status).toBe(409);
		expect(sb.stats().faults).toMatchObject({ http500: 1, resetAfter: 1 });
		expect(sb.stats().customers).toBe(1);
	});

	it('POST /__admin/fault-once arms the same; an invalid rule is refused; reset disarms', async () => {
		const admin = (rule: unknown) =>
			call(`${sb.rootUrl}/__admin/fault-once`, { method: 'POST', body: rule });
		expect((await admin({ bodyContains: 'ada3@', fault: 'refuse' })).status).toBe(200);
		expect((await admin({ bodyContains: 'ada3@', fault: 'explode' })).json).toEqual({
			status: 'error',
			message: expect.stringContaining('unknown fault explode'),
		});
		expect(() => sb.faultOnce({ bodyContains: '', fault: 'refuse' })).toThrow(/bodyContains/);
		expect((await create(3)).status).toBe(400);
		sb.faultOnce({ bodyContains: 'ada4@', fault: 'refuse' });
		sb.reset();
		expect((await create(4)).status).toBe(200);
	});
});

describe('latency', () => {
	it('waits latency ± jitter and tracks concurrency', async () => {
		const sb = await startSandbox({ latencyMs: 80, jitterMs: 20, seed: 7 });
		try {
			const results = await Promise.all(
				Array.from({ length: 8 }, (_, i) =>
					timed(() => call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(i) })),
				),
			);
			for (const r of results) {
				expect(r.value.status).toBe(200);
				expect(r.ms).toBeGreaterThanOrEqual(58);
			}
			expect(Math.min(...results.map((r) => r.ms))).toBeLessThan(1000);
			const s = sb.stats();
			expect(s.concurrency.max).toBeGreaterThanOrEqual(2);
			expect(s.concurrency.current).toBe(0);
		} finally {
			await sb.close();
		}
	});
});

describe('robustness', () => {
	it('survives garbage bytes, a half-sent body and a client that hangs up', async () => {
		const sb = await startSandbox({ latencyMs: 30 });
		try {
			const garbage = await rawExchange(sb.rootUrl, 'THIS IS NOT HTTP\r\n\r\n');
			expect(garbage).toMatch(/^HTTP\/1\.1 400/);
			await rawExchange(
				sb.rootUrl,
				`POST /api/1.1/wf/create-customer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sb.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"first_na`,
				{ closeAfterWrite: true },
			);
			await rawExchange(
				sb.rootUrl,
				`POST /api/1.1/wf/create-customer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sb.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
				{ closeAfterWrite: true },
			);
			const ok = await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
			expect(ok.status).toBe(200);
			expect(sb.stats().internalErrors).toBe(0);
		} finally {
			await sb.close();
		}
	});
});
