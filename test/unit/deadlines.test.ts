import { Deadlines, WINDOW_MS, WINDOW_USES } from '../../nodes/InvoiceService/transport/deadlines';

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the time the signal aborted at. */
const abortedAt = async (signal: AbortSignal) =>
	await new Promise<number>((resolve) =>
		signal.addEventListener('abort', () => resolve(Date.now()), { once: true }),
	);

describe('Deadlines: requests that start together share one deadline', () => {
	it(`up to ${WINDOW_USES} requests in the same moment share a signal; the next one gets its own`, () => {
		const deadlines = new Deadlines(60_000);
		const taken = Array.from({ length: WINDOW_USES + 1 }, () => deadlines.next(undefined));
		expect(new Set(taken.slice(0, WINDOW_USES).map((d) => d.signal)).size).toBe(1);
		expect(taken[WINDOW_USES].signal).not.toBe(taken[0].signal);
	});

	it(`a request ${WINDOW_MS} ms or more after the first of a window gets a new deadline`, async () => {
		const deadlines = new Deadlines(60_000);
		const first = deadlines.next(undefined);
		await sleep(WINDOW_MS + 10);
		expect(deadlines.next(undefined).signal).not.toBe(first.signal);
	});

	it('cuts a request no earlier than Timeout after it started, and at most WINDOW_MS later', async () => {
		const timeoutMs = 200;
		const deadlines = new Deadlines(timeoutMs);
		const firstStart = Date.now();
		const first = deadlines.next(undefined);
		await sleep(WINDOW_MS - 20);
		const lastStart = Date.now();
		const last = deadlines.next(undefined);
		expect(last.signal).toBe(first.signal);
		const at = await abortedAt(last.deadline);
		expect(at - lastStart).toBeGreaterThanOrEqual(timeoutMs);
		// The first request of the window waits longest: Timeout + WINDOW_MS (a little more on a busy machine).
		expect(at - firstStart).toBeGreaterThanOrEqual(timeoutMs + WINDOW_MS - 1);
		expect(at - firstStart).toBeLessThan(timeoutMs + WINDOW_MS + 150);
		expect(first.signal.aborted).toBe(true);
	});

	it("follows the execution's cancel signal, and a new cancel signal opens a new window", () => {
		const deadlines = new Deadlines(60_000);
		const stop = new AbortController();
		const taken = deadlines.next(stop.signal);
		expect(taken.signal.aborted).toBe(false);
		stop.abort();
		expect(taken.signal.aborted).toBe(true);
		expect(taken.deadline.aborted).toBe(false);
		const other = new AbortController();
		expect(deadlines.next(other.signal).signal).not.toBe(taken.signal);
	});

	it("sets the helper's idle time-out past the latest shared deadline", () => {
		expect(new Deadlines(1000).helperTimeoutMs).toBe(1000 + WINDOW_MS);
	});
});
