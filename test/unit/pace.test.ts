// The process-wide pace under a rate limit, on jest's clock: who goes when, after one refusal and after the next.
import { serviceIdentity, servicePace, type Turn } from '../../nodes/InvoiceService/transport/pace';

let services = 0;
/** A service nobody else in this file uses (the pace is one per process). */
const freshService = () => serviceIdentity(`https://pace-${++services}.example.com`, 'k');

/** Queues `count` requests and records when each is let go (ms since `since`). */
function queue(service: string, count: number, since: number) {
	const starts: number[] = [];
	const turns = Array.from({ length: count }, () =>
		servicePace.turn(service).then((turn) => {
			starts.push(turn.at - since);
			return turn;
		}),
	);
	return { starts, turns };
}

/** `count` requests let go and accepted right away. */
async function acceptedAtOnce(service: string, count: number): Promise<void> {
	for (let i = 0; i < count; i++) {
		await servicePace.turn(service);
		servicePace.accepted(service);
	}
}

const gaps = (starts: number[]) => starts.slice(1).map((start, i) => start - starts[i]);

describe('the pace of a rate-limited service', () => {
	// Each test's clock starts where the previous one's surely ended (the pace's entries stay in the process).
	let clock = 1_000_000;
	beforeEach(() => jest.useFakeTimers({ now: (clock += 1_000_000) }));
	afterEach(() => jest.useRealTimers());

	it('at the first 429, paces at a little under what was sent in the second before, after the pause', async () => {
		const service = freshService();
		const t0 = Date.now();
		await acceptedAtOnce(service, 10);
		const refused = await servicePace.turn(service);
		servicePace.refused(service, refused, { waitMs: 1000, rateLimited: true });

		const { starts } = queue(service, 5, t0);
		await jest.advanceTimersByTimeAsync(999);
		expect(starts).toEqual([]); // nobody goes during the pause
		await jest.advanceTimersByTimeAsync(1000);
		// 10 sent in the second before the refused one: 9.5 a second, one every 105 ms from the pause's end.
		expect(starts[0]).toBe(1000);
		for (const gap of gaps(starts)) expect(gap).toBeGreaterThanOrEqual(105);
		for (const gap of gaps(starts)) expect(gap).toBeLessThanOrEqual(106);
	});

	it('at a later 429, paces at what the service accepted since the previous one, and everybody waiting follows at once', async () => {
		const service = freshService();
		const t0 = Date.now();
		await acceptedAtOnce(service, 10);
		const first = await servicePace.turn(service);
		servicePace.refused(service, first, { waitMs: 1000, rateLimited: true }); // 9.5 a second from t0 + 1000

		const { starts, turns } = queue(service, 30, t0);
		// The first 20 are let go (by t0 + 1000 + 19 × 105.3 ≈ 3000) and accepted.
		await jest.advanceTimersByTimeAsync(3050);
		expect(starts).toHaveLength(20);
		for (let i = 0; i < 20; i++) servicePace.accepted(service);
		// The 21st (let go at ≈ 3105) is refused: 20 accepted in the 3.1 s since the first refusal, pause included.
		await jest.advanceTimersByTimeAsync(100);
		const second = await turns[20];
		expect(second.at - t0).toBeGreaterThanOrEqual(3100);
		servicePace.refused(service, second, { waitMs: 1000, rateLimited: true });
		const measured = (20 * 1000) / (second.at - first.at);

		await jest.advanceTimersByTimeAsync(10_000);
		expect(starts).toHaveLength(30);
		// The 9 still waiting go after the new pause, at the new pace (about 6.3 a second, ≈ 160 ms apart),
		// not at the slots the old pace (105 ms apart) would have given them.
		const after = starts.slice(21);
		expect(after[0]).toBeGreaterThanOrEqual(second.at - t0 + 1000);
		const interval = 1000 / (measured * 0.98);
		for (const gap of gaps(after)) expect(Math.abs(gap - interval)).toBeLessThanOrEqual(2);
	});

	it('a 429 just after a pause does not make the pace collapse: at most it halves', async () => {
		const service = freshService();
		const t0 = Date.now();
		await acceptedAtOnce(service, 20);
		const first = await servicePace.turn(service);
		servicePace.refused(service, first, { waitMs: 1000, rateLimited: true }); // 19 a second
		const { starts, turns } = queue(service, 6, t0);
		await jest.advanceTimersByTimeAsync(1000);
		// The first request after the pause is refused too (the limit had not come back yet).
		servicePace.refused(service, await turns[0], { waitMs: 1000, rateLimited: true });
		await jest.advanceTimersByTimeAsync(5000);
		expect(starts).toHaveLength(6);
		// Nothing accepted since the first refusal, yet 19 × ½ = 9.5 a second (105 ms apart), never one a second.
		for (const gap of gaps(starts.slice(1))) expect(gap).toBeLessThanOrEqual(106);
		for (const gap of gaps(starts.slice(1))) expect(gap).toBeGreaterThanOrEqual(105);
	});

	it('a 429 of a request let go before the pace was set (an echo) moves the pause but not the pace', async () => {
		const service = freshService();
		const t0 = Date.now();
		await acceptedAtOnce(service, 10);
		const inFlight: Turn[] = [await servicePace.turn(service), await servicePace.turn(service)];
		servicePace.refused(service, inFlight[0], { waitMs: 1000, rateLimited: true }); // 10 sent before it: 9.5 a second
		await jest.advanceTimersByTimeAsync(200);
		servicePace.refused(service, inFlight[1], { waitMs: 1000, rateLimited: true }); // the same overload, answered later

		const { starts } = queue(service, 4, t0);
		await jest.advanceTimersByTimeAsync(5000);
		expect(starts[0]).toBe(1200); // the later Retry-After counts
		for (const gap of gaps(starts)) expect(gap).toBeGreaterThanOrEqual(105);
		for (const gap of gaps(starts)) expect(gap).toBeLessThanOrEqual(106);
	});

	it('a 503 with Retry-After pauses everybody without pacing them afterwards', async () => {
		const service = freshService();
		const t0 = Date.now();
		const unavailable = await servicePace.turn(service);
		servicePace.refused(service, unavailable, { waitMs: 500, rateLimited: false });
		const { starts } = queue(service, 5, t0);
		await jest.advanceTimersByTimeAsync(500);
		expect(starts).toEqual([500, 500, 500, 500, 500]);
	});

	it('waiting requests keep their entry alive; it is dropped once idle', async () => {
		await jest.advanceTimersByTimeAsync(31_000); // the other tests' services are forgotten
		expect(servicePace.activeServices()).toBe(0);
		const service = freshService();
		const refused = await servicePace.turn(service);
		servicePace.refused(service, refused, { waitMs: 40_000, rateLimited: false });
		const { starts } = queue(service, 1, Date.now());
		await jest.advanceTimersByTimeAsync(35_000);
		expect(servicePace.activeServices()).toBe(1); // 35 s idle, but a request is waiting
		await jest.advanceTimersByTimeAsync(5_000);
		expect(starts).toHaveLength(1);
		await jest.advanceTimersByTimeAsync(31_000);
		expect(servicePace.activeServices()).toBe(0);
	});
});
