// Rate-limit suite (issue 4): with the node's defaults (concurrency 5, Max Retry Wait 120 s) every item gets
// through a rate-limited service, and a 503 with Retry-After pauses the whole batch for the time asked.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	account,
	customers,
	customersByEmail,
	itemError,
	runAgainst,
	settle,
	start503Proxy,
} from './helpers';
import { customerParameters } from '../support/invoice-service';

jest.setTimeout(120_000);

describe('rate-limit suite', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({
			rateLimit: { perSecond: 50, burst: 50 },
			latencyMs: 40,
			jitterMs: 30,
			seed: 7,
		});
	});
	afterAll(async () => {
		await sandbox.close();
	});
	beforeEach(() => sandbox.reset());

	it('token bucket 50/s (burst 50), latency 40 ± 30 ms, 800 items, node defaults: 100 % succeed, in order', async () => {
		const inputs = customers(800, 'rate');
		const started = Date.now();
		const result = await runAgainst(sandbox.rootUrl, sandbox.apiKey, customerParameters(), inputs);
		const ms = Date.now() - started;
		await settle(sandbox);

		expect(result.error).toBeUndefined();
		expect(result.status).toBe('success');
		const { successes, errors, problems } = account(result.outputs, inputs.length);
		expect(problems).toEqual([]);
		expect(errors.size).toBe(0);
		expect(successes.size).toBe(inputs.length);
		expect(result.outputs[0].map((item) => item.json.email)).toEqual(inputs.map((i) => i.email));

		const stats = sandbox.stats();
		const byEmail = customersByEmail(sandbox);
		for (const [i, item] of successes) expect(byEmail.get(inputs[i].email)).toEqual([item.json.id]);
		expect(sandbox.records().customers).toHaveLength(inputs.length);
		// the limit was really hit, and the node backed off as a batch instead of hammering: the 429s are a
		// small share of the requests (five workers hammering on their own would collect far more)
		expect(stats.faults.rateLimited).toBeGreaterThan(0);
		expect(stats.faults.rateLimited).toBeLessThan(inputs.length * 0.25);
		expect(stats.requests.byStatus['200']).toBe(inputs.length);
		// cannot beat the bucket: (800 - 50 burst) / 50 per second = 15 s
		expect(ms).toBeGreaterThanOrEqual(14_000);
		const boundMs = ((inputs.length - 50) / 50) * 1000;
		console.log(
			`[rate-limit] 800 items at 50/s: ${ms} ms = ${(ms / boundMs).toFixed(2)} × the bound (${boundMs} ms); ${stats.faults.rateLimited} answers were 429; max in flight ${stats.concurrency.max}`,
		);
	});
});

describe('a burst of executions, one event each, against a rate limit', () => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await startSandbox({
			rateLimit: { perSecond: 20, burst: 20 },
			latencyMs: 5,
			seed: 9,
		});
	});
	afterAll(async () => {
		await sandbox.close();
	});

	it('120 executions arriving within 1.5 s, 20 creates/s allowed: each created once, few 429s (the pace is shared)', async () => {
		const events = customers(120, 'burst');
		const started = Date.now();
		const runs: Array<ReturnType<typeof runAgainst>> = [];
		for (const [index, event] of events.entries()) {
			runs.push(runAgainst(sandbox.rootUrl, sandbox.apiKey, customerParameters(), [event]));
			if (index % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 120));
		}
		const results = await Promise.all(runs);
		const ms = Date.now() - started;
		await settle(sandbox);

		for (const result of results) expect(result.status).toBe('success');
		const byEmail = customersByEmail(sandbox);
		for (const event of events) expect(byEmail.get(event.email)).toHaveLength(1);
		const stats = sandbox.stats();
		const share = stats.faults.rateLimited / stats.requests.total;
		// Each execution finding the limit on its own, and all coming back on the same beat, collects far more.
		expect(share).toBeLessThan(0.1);
		const boundMs = ((events.length - 20) / 20) * 1000;
		console.log(
			`[burst] 120 executions at 20/s: ${ms} ms = ${(ms / boundMs).toFixed(2)} × the bound (${boundMs} ms); ${stats.faults.rateLimited} of ${stats.requests.total} answers were 429 (${(share * 100).toFixed(1)} %)`,
		);
	});
});

describe('503 with Retry-After', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({ latencyMs: 20, jitterMs: 10, seed: 8 });
	});
	afterAll(async () => {
		await sandbox.close();
	});
	beforeEach(() => sandbox.reset());

	it('503 + Retry-After: 2 for requests 100-104: nothing lost, the whole batch waits 2 s, the 503s are re-sent', async () => {
		const proxy = await start503Proxy(sandbox.rootUrl, (n) => n >= 100 && n < 105, 2);
		try {
			const inputs = customers(400, 'unavailable');
			const result = await runAgainst(proxy.baseUrl, sandbox.apiKey, customerParameters(), inputs);
			await settle(sandbox);

			expect(result.error).toBeUndefined();
			const { successes, errors, problems } = account(result.outputs, inputs.length);
			expect(problems).toEqual([]);
			expect(errors.size).toBe(0);
			expect(successes.size).toBe(inputs.length);
			expect(sandbox.records().customers).toHaveLength(inputs.length);

			const unavailable = proxy.arrivals.filter((a) => a.status === 503);
			expect(unavailable).toHaveLength(5);
			// each 503'd request was sent again: one extra request per 503, no more
			expect(proxy.arrivals).toHaveLength(inputs.length + unavailable.length);
			// After the first 503, the next requests wait for Retry-After (2 s). At most the other workers'
			// requests that were already on their way (concurrency 5 → at most 4) arrive inside that window.
			const first503 = unavailable[0].at;
			const insideWindow = proxy.arrivals.filter((a) => a.at > first503 && a.at < first503 + 1900);
			expect(insideWindow.length).toBeLessThanOrEqual(4);
			const after = proxy.arrivals.filter((a) => a.at >= first503 + 1900);
			expect(after.length).toBeGreaterThan(250);
		} finally {
			await proxy.close();
		}
	});

	it('503 without Retry-After: exponential back-off, every item succeeds', async () => {
		const proxy = await start503Proxy(sandbox.rootUrl, (n) => n === 10 || n === 11, undefined);
		try {
			const inputs = customers(60, 'backoff');
			const result = await runAgainst(proxy.baseUrl, sandbox.apiKey, customerParameters(), inputs);
			await settle(sandbox);
			expect(result.error).toBeUndefined();
			const { successes, problems } = account(result.outputs, inputs.length);
			expect(problems).toEqual([]);
			expect(successes.size).toBe(inputs.length);
			expect(sandbox.records().customers).toHaveLength(inputs.length);
			expect(proxy.arrivals).toHaveLength(inputs.length + 2);
		} finally {
			await proxy.close();
		}
	});

	it('503s beyond Max Retry Wait: the item fails with a clear message, the others succeed, nothing duplicated', async () => {
		// With concurrency 1 the first three requests are all item 0's attempts: 503 + Retry-After 1 s each,
		// and Max Retry Wait is 2 s, so item 0 gives up after its third answer.
		const inputs = customers(20, 'giveup');
		const stubborn = await start503Proxy(sandbox.rootUrl, (n) => n < 3, 1);
		try {
			const result = await runAgainst(
				stubborn.baseUrl,
				sandbox.apiKey,
				customerParameters({ options: { concurrency: 1, maxRetryWait: 2 } }),
				inputs,
				'continueRegularOutput',
			);
			await settle(sandbox);
			const { successes, errors, problems } = account(result.outputs, inputs.length);
			expect(problems).toEqual([]);
			expect([...errors.keys()]).toEqual([0]);
			// the error item carries the HTTP code and the retry story
			const failure = itemError(errors.get(0));
			expect(failure?.message).toMatch(/unavailable \(HTTP 503\)/);
			expect(failure?.httpCode).toBe('503');
			expect(failure?.description).toMatch(
				/asked to wait 1 s\. Retried for 2 s \(Max Retry Wait: 2 s\), then gave up/,
			);
			expect(successes.size).toBe(inputs.length - 1);
			expect(sandbox.records().customers).toHaveLength(inputs.length - 1);
			expect(customersByEmail(sandbox).has(inputs[0].email)).toBe(false);
		} finally {
			await stubborn.close();
		}
	});
});
