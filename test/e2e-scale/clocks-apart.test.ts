// Idempotency Keys across queue-mode workers whose clocks disagree, and the lock's faults (issue 27 follow-up).
// Workers on one machine share a clock, so keys-across-workers.test.ts never sees skew; real hosts do. Here worker
// 2 runs under libfaketime (test/support/faketime.ts: its Date.now() moved, its monotonic clock not; Debian's
// `faketime`, installed by scripts/install-faketime.sh), on the deployment test/support/keys-deployment.ts starts
// (PostgreSQL, Redis, a main and 2 workers, concurrency 5 each, the workers through a proxy to PostgreSQL).
//
// Measured before writing this (2026-11-27, Node 24.21): a Node 24 process under FAKETIME=+0.300 / -0.300 / +3 /
// -3 (with FAKETIME_DONT_FAKE_MONOTONIC=1) reports Date.now() off by 300 / -300 / 3001 / -3000 ms and
// process.hrtime in step with its parent (the first test measures it again); n8n's worker boots, connects to
// PostgreSQL and Redis and runs executions under it, and the startedAt it writes (its clock) lies the offset away
// from the main's createdAt (checked in every clock scenario).
//
// Each clock scenario (default node options: a key in flight elsewhere is waited for 120 + 60 + 30 s): 120 events
// at random instants of 5 s, every sixth posted twice at once (a double submit), every fifth again 0-2 s later;
// then every event once more (the re-delivery pass). 0 lost, 0 invoiced twice, 0 new invoices in the pass (a key
// erased), 0 executions failing with "cannot be kept in this workflow", and each round settled within 60 s of
// its last delivery. On 2.41.1 for worker 2 at +300 ms and -3 s; on 1.123.81 at +3 s.
// The lock's faults, on 2.41.1 with the clocks together (a dropped connection after a commit is
// keys-across-workers.test.ts's (e)): (b) PostgreSQL frozen (SIGSTOP) for 70 s, longer than the lock's 60 s lease,
// mid-storm; (a) a worker frozen right after its lock's INSERT committed, the lock's row seen in PostgreSQL,
// and the worker killed (SIGKILL). Each then a re-delivery pass (a sender retrying): nothing twice, nothing lost
// (in (a), but the keys the dead worker left in flight, which say "outcome unknown" by design), settled within
// the take-over (94 s) + 60 s of the fault's end ((a): + the 35 s a key left in flight is waited for once the lock
// is back).
//
// Time (2-core machine): see test/e2e-scale/README.md ("Clocks apart"). Logs:
// test-output/e2e-scale/clocks-{n8n-main,n8n-worker-1,n8n-worker-2}-<version>.log.
import { sleep } from 'n8n-workflow';

import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { N8N_VERSIONS } from '../../tools/n8n';
import { clockOffsetEnv, measureClockOffset } from '../support/faketime';
import {
	KeysDeployment,
	MINUTE,
	WORKER_CONCURRENCY,
	type KeyedScenario,
} from '../support/keys-deployment';

const SECOND = 1_000;
/** A round must settle this soon after its last delivery (today's lock took about 210 s when it went wrong). */
const CLOCK_BOUND_MS = 60 * SECOND;
/** How long a round is still counted after the bound, so that a failure shows its counts. */
const COUNT_UNTIL_MS = 240 * SECOND;
/**
 * A fault must be over this soon after it ends: a dead holder's lock taken over (watched 30–45 s, marked, watched
 * 60 s, 85 s after another worker's mark seen since, a pause of up to 30 s, held 25 s later: 185 s), and 60 s to
 * catch up.
 */
const TAKE_OVER_MS =
	1.5 * KEYS_TIMING.lock.markAfterMs +
	KEYS_TIMING.lock.leaseMs +
	KEYS_TIMING.lock.graceMs +
	KEYS_TIMING.lock.breakJitterMaxMs +
	KEYS_TIMING.lock.graceMs;
const FAULT_BOUND_MS = TAKE_OVER_MS + 60 * SECOND;
/**
 * (a)'s node options: Timeout 5 s, no retries. A key the killed worker left in flight is waited for 5 s + the 30 s
 * margin from when a delivery first finds it in flight, once the lock is taken over: its bound is the take-over, that
 * wait, and 60 s.
 */
const KILLED_OPTIONS = { timeout: 5_000, maxRetryWait: 0 };
const KILLED_BOUND_MS = FAULT_BOUND_MS + KILLED_OPTIONS.timeout + 30 * SECOND;
/** n8n's text for a lock row no lock can be read from (idempotencyKeys.ts, kind "conflict"). */
const CANNOT_BE_KEPT = 'cannot be kept in this workflow';
/**
 * The first INSERT of a processed-data row: after a workflow's first hold, only the lock's row is inserted. n8n's
 * TypeORM names the table with its schema (`INSERT INTO "public"."processed_data"("workflowId", ...)`): the table's
 * name followed by its column list is an INSERT's alone (an UPDATE or SELECT names no columns there).
 */
const ROW_INSERT = '"processed_data"(';
const STORM = 120;
/** What every scenario must end with: each event invoiced once, no key erased, no lock left behind. */
const KEYS_KEPT = { lost: 0, invoicedTwice: 0, keysErased: 0, cannotBeKept: 0, lockEntries: 0 };

const label = (offsetMs: number) =>
	`${offsetMs < 0 ? '-' : '+'}${Math.abs(offsetMs) >= SECOND ? `${Math.abs(offsetMs) / SECOND} s` : `${Math.abs(offsetMs)} ms`}`;

test(
	'libfaketime moves a Node 24 process’s wall clock, not its monotonic clock',
	async () => {
		for (const offsetMs of [0, 300, -300, 3_000, -3_000]) {
			const measured = await measureClockOffset(clockOffsetEnv(offsetMs));
			console.log(`[clocks apart] FAKETIME ${label(offsetMs)}: ${JSON.stringify(measured)}`);
			expect(Math.abs(measured.shiftMs - offsetMs)).toBeLessThanOrEqual(20);
			expect(Math.abs(measured.monotonicMs)).toBeLessThanOrEqual(measured.errorMs + 20);
		}
	},
	MINUTE,
);

/** Waits for `count` executions to finish; how long after `since` they had (undefined: not by COUNT_UNTIL_MS). */
async function settledAfter(
	s: KeyedScenario,
	count: number,
	since: number,
	{ countUntilMs = COUNT_UNTIL_MS, except }: { countUntilMs?: number; except?: Set<string> } = {},
) {
	try {
		const { statuses } = await s.settled(count, since + countUntilMs - Date.now(), except);
		return { ms: Date.now() - since, statuses };
	} catch (error) {
		return { ms: undefined, statuses: { unsettled: String((error as Error).message) } };
	}
}

/** Deliveries of every event once more, as a sender re-delivers; the time of the last one. */
async function deliverAll(s: KeyedScenario, ids: string[]): Promise<number> {
	await Promise.all(ids.map(async (id) => await s.deliver(id)));
	return Date.now();
}

/**
 * A storm: each event at a random instant of `spreadMs`; every sixth posted twice at once (a double submit), every
 * fifth again 0-2 s after its first delivery. Returns the deliveries and the time of the last one.
 */
async function storm(s: KeyedScenario, ids: string[], spreadMs: number) {
	let deliveries = 0;
	const once = async (id: string) => {
		await s.deliver(id);
		deliveries++;
	};
	await Promise.all(
		ids.map(async (id, i) => {
			await sleep(Math.random() * spreadMs);
			await Promise.all(i % 6 === 0 ? [once(id), once(id)] : [once(id)]);
			if (i % 5 !== 0) return;
			await sleep(Math.random() * 2_000);
			await once(id);
		}),
	);
	return { deliveries, last: Date.now() };
}

/**
 * Events invoiced after the storm whose count grew in the re-delivery pass (a key erased), from the counts
 * before and after it.
 */
const erasedKeys = (ids: string[], before: Map<string, number>, after: Map<string, number>) =>
	ids.filter((id) => (before.get(id) ?? 0) > 0 && (after.get(id) ?? 0) > (before.get(id) ?? 0))
		.length;

/** The keys and lock states that matter after a scenario, in one object (so a failure shows them all). */
async function verdict(s: KeyedScenario, ids: string[], before: Map<string, number>) {
	const after = s.invoicesPerEvent();
	const all = await s.executions();
	return {
		lost: ids.filter((id) => (after.get(id) ?? 0) === 0).length,
		invoicedTwice: ids.filter((id) => (after.get(id) ?? 0) > 1).length,
		keysErased: erasedKeys(ids, before, after),
		cannotBeKept: await s.executionsSaying(CANNOT_BE_KEPT),
		lockEntries: await s.lockEntries(),
		failed: all.filter((e) => e.status !== 'success').length,
	};
}

/**
 * Which worker (1-based) ran each execution, and how far each worker's startedAt (its own clock) lies from the
 * main's createdAt at the least: the queue's quickest pick-up plus that worker's clock offset.
 */
async function clockOffsetsSeen(d: KeysDeployment, workflowId: string) {
	const rows = await d.pg.query(
		`SELECT id, round(extract(epoch from ("startedAt" - "createdAt")) * 1000) FROM execution_entity WHERE "workflowId" = '${workflowId}' AND "startedAt" IS NOT NULL`,
	);
	const least: Record<number, number> = {};
	for (const row of rows.split('\n').filter(Boolean)) {
		const [id, ms] = row.split('|');
		for (const n of d.workersThatRan(id)) least[n] = Math.min(least[n] ?? Infinity, Number(ms));
	}
	return least;
}

/**
 * Worker 2 at `offsetMs` (worker 1 on the machine's clock): restarted when it runs at another offset or died;
 * worker 1 restarted when it died.
 */
function clocks(d: KeysDeployment) {
	let worker2At = 0;
	return {
		get offsetMs() {
			return worker2At;
		},
		async set(offsetMs: number) {
			if (d.workers[0].exited()) await d.startWorker(0);
			if (worker2At === offsetMs && !d.workers[1].exited()) return;
			await d.startWorker(1, clockOffsetEnv(offsetMs));
			worker2At = offsetMs;
		},
		started(offsetMs: number) {
			worker2At = offsetMs;
			return [{}, clockOffsetEnv(offsetMs)];
		},
	};
}

/** The clock scenario: storm, re-delivery pass, and the verdict, with worker 2 at `offsetMs`. */
async function clockScenario(d: KeysDeployment, offsetMs: number) {
	const name = `clock${offsetMs < 0 ? 'm' : 'p'}${Math.abs(offsetMs)}`;
	const s = await d.scenario(name);
	const ids = d.events(name, STORM);
	const round = await storm(s, ids, 5_000);
	const stormDone = await settledAfter(s, round.deliveries, round.last);
	const before = s.invoicesPerEvent();
	const afterStorm = s.tally(ids);
	const passLast = await deliverAll(s, ids);
	const passDone = await settledAfter(s, round.deliveries + ids.length, passLast);
	const seen = await clockOffsetsSeen(d, s.workflowId);
	const result = await verdict(s, ids, before);
	d.log(
		`clock ${label(offsetMs)}: ${JSON.stringify({ ...result, afterStorm, deliveries: round.deliveries + ids.length, stormSettledMs: stormDone.ms, stormStatuses: stormDone.statuses, passSettledMs: passDone.ms, passStatuses: passDone.statuses, outcomeUnknown: await s.executionsSaying('is unknown: the service may'), stayedBusy: await s.executionsSaying('stayed busy'), leastStartLagMs: seen, webhooks: s.deliveries })}`,
	);
	// Worker 2 ran with its clock moved: its startedAt lies the offset away from worker 1's (both ran some). Within
	// two thirds of the offset (200 ms at 300 ms): its sign and size are seen, and the queue's pick-up lag under
	// load (226 ms off at +3 s once, on a loaded CI machine) does not fail a scenario that kept its keys.
	expect(seen[1]).toBeDefined();
	expect(seen[2]).toBeDefined();
	expect(Math.abs(seen[2] - seen[1] - offsetMs)).toBeLessThan((Math.abs(offsetMs) * 2) / 3);
	expect({
		...result,
		stormSettledWithin60s: stormDone.ms !== undefined && stormDone.ms <= CLOCK_BOUND_MS,
		passSettledWithin60s: passDone.ms !== undefined && passDone.ms <= CLOCK_BOUND_MS,
	}).toEqual({
		...KEYS_KEPT,
		failed: 0,
		stormSettledWithin60s: true,
		passSettledWithin60s: true,
	});
}

// -------------------------------------------------------------------------------------------------------------

if (N8N_VERSIONS.includes('2.41.1'))
	describe('Idempotency Keys with worker clocks apart, and the lock’s faults: n8n 2.41.1 in queue mode', () => {
		const d = new KeysDeployment('2.41.1', 'clocks');
		const clock = clocks(d);

		beforeAll(async () => await d.start(clock.started(300)), 20 * MINUTE);
		afterAll(async () => await d.stop(), 3 * MINUTE);

		// Worker 2 300 ms ahead and 3 s behind, as issue 42 asks (both signs, both sizes; +3 s runs on 1.123.81).
		// -300 ms and +3 s on 2.41.1 passed alike (test/e2e-scale/README.md) and took 2 minutes of CI's 60.
		test.each([300, -3_000])(
			'worker 2 at %p ms: a storm with double submits, then a re-delivery pass: nothing lost, twice or erased, settled within 60 s',
			async (offsetMs) => {
				await clock.set(offsetMs);
				await clockScenario(d, offsetMs);
			},
			15 * MINUTE,
		);

		/**
		 * A fault's scenario with the clocks together: a workflow whose first event has been invoiced (its node row
		 * exists, so that the next processed-data INSERT is a lock's), and 40 more events.
		 */
		async function faultScenario(name: string, options: Record<string, unknown> = {}) {
			await clock.set(0);
			const s = await d.scenario(name, options);
			const ids = d.events(name, 41);
			await s.deliver(ids[0]);
			await s.settled(1);
			return { s, ids };
		}

		/** An armed proxy fault, or a failure naming it when no lock INSERT came within a minute. */
		async function fault<T>(what: string, armed: Promise<T>): Promise<T> {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const timeout = new Promise<never>((_, reject) => {
				timer = setTimeout(() => {
					d.proxy.disarm();
					reject(new Error(`${what}: no INSERT of a processed-data row (the lock's) within 60 s`));
				}, MINUTE);
			});
			try {
				return await Promise.race([armed, timeout]);
			} finally {
				clearTimeout(timer);
			}
		}

		/**
		 * After a fault that ended at `endedAt`: the storm settled, every event re-delivered (a sender retrying what
		 * failed), and the verdict. Every failure must be one that sent nothing.
		 */
		async function afterFault(
			tag: string,
			s: KeyedScenario,
			ids: string[],
			deliveries: number,
			endedAt: number,
			noted: Record<string, unknown> = {},
		) {
			const stormDone = await settledAfter(s, 1 + deliveries, endedAt, {
				countUntilMs: 2 * FAULT_BOUND_MS,
			});
			const before = s.invoicesPerEvent();
			const nothingSent = await s.executionsSaying('Nothing was sent');
			const passLast = await deliverAll(s, ids);
			const passDone = await settledAfter(s, 1 + deliveries + ids.length, passLast);
			const result = await verdict(s, ids, before);
			d.log(
				`${tag} ${JSON.stringify({ ...noted, ...result, stormSettledMs: stormDone.ms, stormStatuses: stormDone.statuses, nothingSent, passSettledMs: passDone.ms, passStatuses: passDone.statuses })}`,
			);
			expect({
				...result,
				failed: result.failed - nothingSent,
				outcomeUnknown: await s.executionsSaying('is unknown: the service may'),
				settledWithinBound: stormDone.ms !== undefined && stormDone.ms <= FAULT_BOUND_MS,
				passSettledWithin60s: passDone.ms !== undefined && passDone.ms <= CLOCK_BOUND_MS,
			}).toEqual({
				...KEYS_KEPT,
				failed: 0,
				outcomeUnknown: 0,
				settledWithinBound: true,
				passSettledWithin60s: true,
			});
		}

		test(
			'(b) PostgreSQL frozen 70 s (longer than the lease) mid-storm, then let run: nothing twice, nothing lost after re-delivery, not stuck',
			async () => {
				const { s, ids } = await faultScenario('frozen');
				const round = storm(s, ids.slice(1), 5_000);
				await sleep(2_000);
				d.pg.pause();
				try {
					await sleep(70 * SECOND);
				} finally {
					d.pg.resume();
				}
				const resumedAt = Date.now();
				const { deliveries } = await round;
				await afterFault('(b)', s, ids, deliveries, resumedAt);
			},
			15 * MINUTE,
		);

		test(
			'(a) a worker killed (SIGKILL) while it holds the lock: the other worker goes on after the lease; nothing twice, nothing lost but the dead worker’s keys in flight',
			async () => {
				const { s, ids } = await faultScenario('killed', KILLED_OPTIONS);
				const frozen = fault('freeze', d.proxy.freezeAfterCommit(ROW_INSERT));
				const round = storm(s, ids.slice(1), 3_000);
				const hit = await frozen;
				// The frozen worker's lock is in PostgreSQL: it holds it, and waits for an answer that never comes.
				const lockRow = await s.lockEntries();
				const victim = d.workers[hit.listener];
				victim.child.kill('SIGKILL');
				const killedAt = Date.now();
				await (async () => {
					for (; !victim.exited(); ) await sleep(100);
				})();
				const { deliveries } = await round;
				// n8n fails the dead worker's executions (it does not run them again); the sender re-delivers below.
				const dead = new Set(
					(await s.executions())
						.map((e) => e.id)
						.filter((id) => d.workersThatRan(id).includes(hit.listener + 1)),
				);
				const stormDone = await settledAfter(s, 1 + deliveries, killedAt, {
					countUntilMs: 2 * FAULT_BOUND_MS,
					except: dead,
				});
				const before = s.invoicesPerEvent();
				const passLast = await deliverAll(s, ids);
				const passDone = await settledAfter(s, 1 + deliveries + ids.length, passLast, {
					except: dead,
				});
				const after = s.invoicesPerEvent();
				// A key the dead worker had claimed stays in flight: its re-delivery says "outcome unknown" (by design:
				// the create may have been sent). Any other event without an invoice is lost.
				const unknown: string[] = [];
				for (const id of ids.filter((e) => (after.get(e) ?? 0) === 0)) {
					if (await s.executionsSaying(`Idempotency Key \\"${id}\\" is unknown`)) unknown.push(id);
				}
				const result = await verdict(s, ids, before);
				d.log(
					`(a) ${JSON.stringify({ killedWorker: hit.listener + 1, lockRow, deadWorkersExecutions: dead.size, ...result, unknown: unknown.length, stormSettledMs: stormDone.ms, stormStatuses: stormDone.statuses, passSettledMs: passDone.ms, passStatuses: passDone.statuses })}`,
				);
				expect(lockRow).toBeGreaterThan(0);
				// At most what the dead worker had in flight: one key per execution it ran at once.
				expect(unknown.length).toBeLessThanOrEqual(WORKER_CONCURRENCY);
				expect({
					lost: result.lost - unknown.length,
					invoicedTwice: result.invoicedTwice,
					keysErased: result.keysErased,
					cannotBeKept: result.cannotBeKept,
					lockEntries: result.lockEntries,
					settledWithinBound: stormDone.ms !== undefined && stormDone.ms <= KILLED_BOUND_MS,
					passSettledWithinBound: passDone.ms !== undefined && passDone.ms <= CLOCK_BOUND_MS,
				}).toEqual({
					...KEYS_KEPT,
					settledWithinBound: true,
					passSettledWithinBound: true,
				});
			},
			15 * MINUTE,
		);
	});

if (N8N_VERSIONS.includes('1.123.81'))
	describe('Idempotency Keys with worker clocks apart: n8n 1.123.81 in queue mode', () => {
		const d = new KeysDeployment('1.123.81', 'clocks');
		const clock = clocks(d);

		beforeAll(async () => await d.start(clock.started(3_000)), 20 * MINUTE);
		afterAll(async () => await d.stop(), 3 * MINUTE);

		// One storm on the older major (issue 42): worker 2 ahead by 3 s, the offset at which a lock that read
		// another process's clock would take over a held lock soonest.
		test.each([3_000])(
			'worker 2 at %p ms: a storm with double submits, then a re-delivery pass: nothing lost, twice or erased, settled within 60 s',
			async (offsetMs) => {
				await clock.set(offsetMs);
				await clockScenario(d, offsetMs);
			},
			15 * MINUTE,
		);
	});
