// The Idempotency Keys' exactly-once code (exactlyOnce/rowLock.ts and keyStore.ts, the real code) in a seeded,
// deterministic simulation of a cluster: 3 or 4 processes, each with its own clock (offsets up to ±5 s, the
// code must never compare them), sharing n8n's processed-data store as a model that behaves query by query as
// n8n's DeduplicationHelper does (test/support/store-model.ts, pinned against n8n's own helper by
// test/e2e-scale/store-model.test.ts). Virtual time: a schedule of events, one at a time, so that a seed replays
// exactly. Each seed draws its faults: every query has a latency, and may be preceded by a pause of its process
// (a GC pause, a wait for one of n8n's database connections: up to 1.5 s, within the margins the lock names in
// docs/how-it-works.md), fail before it runs, or fail after its commit (the write stays, the caller sees an
// error); a process may be killed at any query; the lock's row may start empty or with an earlier version's
// remains. Each process delivers events (5 keys, so that they collide): claim the key, send (the service answers
// created, refused for certain, or nothing: unknown), settle the key. Checked for every seed:
//   - no key answered "new" while it is in flight or may be created (a second create);
//   - no key that may be created is erased from the store at the end;
//   - never two live holders of the lock, and no node-row write without the lock's row;
//   - no key never sent is answered unknown unless the node said why (a failed give-back, a failed claim);
//   - the store is left usable: a fresh process claims a fresh key afterwards, within the lock's wait;
//   - every live process finishes.
// A failure prints its seed: `SIM_SEED=<n> npx jest test/unit/exactly-once-simulation.test.ts --selectProjects unit`
// replays it. SIM_SEEDS=<n> runs more seeds; SIM_MAX_PAUSE_MS=<ms> lets pauses run longer, past the lock's margins
// (how often the windows docs/how-it-works.md names are then hit is measured there).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {
	KeyStore,
	type ClaimAnswer,
	type NodeRow,
	type Outcome,
} from '../../nodes/InvoiceService/exactlyOnce/keyStore';
import { lockTiming, RowLock, type Clock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { hashOf, StoreModel, type Query } from '../support/store-model';

const WORKFLOW = 'sim-workflow';
const TRACE = process.env.SIM_TRACE === '1';
const LOCK_ROW = `${WORKFLOW} `;
const NODE_ID = 'sim-node';
const NODE_ROW = `${WORKFLOW} n:${NODE_ID}`;
/** How long a claim follows a key in flight elsewhere before it counts as unknown (Max Retry Wait + Timeout + margin). */
const FLIGHT_WAIT_MS = 40_000;
/** The simulation's end: every live process must have finished by then (virtual time). */
const LIMIT_MS = 60 * 60_000;

/**
 * The lock and store code as it was before issue 34 (commit BEFORE), loaded once per simulated process: its own
 * module copies (its turns map, its settings), n8n-workflow's `sleep` on the process's clock, and its wall clock
 * (`lockTiming.now`, which that code read) as far apart from the others' as the process's clock is.
 */
const BEFORE = '4da4b65';
const REPO_ROOT = path.resolve(__dirname, '../..');
let beforeDir: string | undefined;
function codeBefore(clock: Clock): { RowLock: typeof RowLock; KeyStore: typeof KeyStore } {
	if (!beforeDir) {
		beforeDir = path.join(REPO_ROOT, 'test-output', 'simulation', `code-${BEFORE}`);
		fs.mkdirSync(beforeDir, { recursive: true });
		for (const name of ['rowLock', 'keyStore']) {
			const source = execFileSync(
				'git',
				['show', `${BEFORE}:nodes/InvoiceService/exactlyOnce/${name}.ts`],
				{ cwd: REPO_ROOT, encoding: 'utf8' },
			);
			fs.writeFileSync(path.join(beforeDir, `${name}.ts`), source);
		}
	}
	const dir = beforeDir;
	let loaded!: { RowLock: typeof RowLock; KeyStore: typeof KeyStore };
	jest.isolateModules(() => {
		jest.doMock('n8n-workflow', () => ({
			...jest.requireActual<object>('n8n-workflow'),
			sleep: async (ms: number) => await clock.sleep(ms),
		}));
		/* eslint-disable @typescript-eslint/no-require-imports */
		const lockModule = require(path.join(dir, 'rowLock')) as {
			RowLock: typeof RowLock;
			lockTiming: { now: () => number };
		};
		lockModule.lockTiming.now = () => WALL_CLOCK + clock.now();
		const storeModule = require(path.join(dir, 'keyStore')) as { KeyStore: typeof KeyStore };
		/* eslint-enable @typescript-eslint/no-require-imports */
		loaded = { RowLock: lockModule.RowLock, KeyStore: storeModule.KeyStore };
	});
	return loaded;
}
/** A wall clock's reading at the simulation's start (the code before counted ticks of it). */
const WALL_CLOCK = 1_800_000_000_000;

/** mulberry32: a small seeded generator. */
function generator(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) | 0;
		let t = Math.imul(state ^ (state >>> 15), 1 | state);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** Virtual time: events run one at a time, in order of time, then of scheduling. */
class Schedule {
	now = 0;
	private seq = 0;
	private readonly events: Array<{ at: number; seq: number; fire: () => void }> = [];

	at(at: number, fire: () => void): void {
		const event = { at, seq: this.seq++, fire };
		let index = this.events.length;
		while (
			index > 0 &&
			(this.events[index - 1].at > at ||
				(this.events[index - 1].at === at && this.events[index - 1].seq > event.seq))
		)
			index--;
		this.events.splice(index, 0, event);
	}

	async sleep(ms: number, alive: () => boolean = () => true): Promise<void> {
		await new Promise<void>((resolve) =>
			this.at(this.now + Math.max(0, ms), () => {
				if (alive()) resolve();
			}),
		);
	}

	/** Runs events until `done` or the limit; every promise an event settles has run on before the next event. */
	async run(done: () => boolean, limit: number): Promise<void> {
		for (;;) {
			// What the last event set going has scheduled its next event before the queue is looked at.
			await new Promise((resolve) => setImmediate(resolve));
			if (this.events.length === 0 || done()) break;
			const event = this.events.shift()!;
			if (event.at > limit) break;
			this.now = event.at;
			event.fire();
		}
	}
}

interface Faults {
	pause: number;
	failBefore: number;
	failAfter: number;
	/** The process killed, and at which of its queries. */
	kill?: { process: number; atQuery: number };
	/** The lock row's state at the start. */
	start: 'absent' | 'empty' | 'remains';
}

interface Process {
	name: string;
	random: () => number;
	clock: Clock;
	store: KeyStore;
	row: NodeRow;
	dead: boolean;
	inside: boolean;
	queries: number;
	done: boolean;
	/** The key this process is claiming or giving back now. */
	claiming?: string;
}

export interface SimulationResult {
	seed: number;
	violations: string[];
	/** What happened (for the kept seeds: each shows its situation). */
	seen: Set<string>;
	queries: number;
}

/** The longest pause of a process before a query: within the lock's margins by default (docs/how-it-works.md). */
const MAX_PAUSE_MS = Number(process.env.SIM_MAX_PAUSE_MS ?? 1500);
if (!(MAX_PAUSE_MS >= 50))
	throw new Error(
		`SIM_MAX_PAUSE_MS must be a number of milliseconds, 50 or more (got "${process.env.SIM_MAX_PAUSE_MS}")`,
	);

export async function simulate(
	seed: number,
	version: 'today' | 'before' = 'today',
	maxPauseMs = MAX_PAUSE_MS,
): Promise<SimulationResult> {
	// The code before drew its jitter from Math.random: seeded too, so that its runs replay.
	const mathRandom = Math.random;
	if (version === 'before') Math.random = generator(seed + 99);
	try {
		return await simulateWith(seed, version, maxPauseMs);
	} finally {
		Math.random = mathRandom;
	}
}

async function simulateWith(
	seed: number,
	version: 'today' | 'before',
	maxPauseMs: number,
): Promise<SimulationResult> {
	const random = generator(seed);
	const schedule = new Schedule();
	const violations: string[] = [];
	const seen = new Set<string>();
	const trace: string[] = [];
	const kinds = new Set<string>();
	const fail = (what: string) => {
		if (TRACE) trace.push(`VIOLATION ${what}`);
		// The first of each kind (the same violation again says nothing new).
		const kind = what.replace(/p\d|event-\d/g, '?');
		if (kinds.has(kind) || kinds.size >= 20) return;
		kinds.add(kind);
		violations.push(`${(schedule.now / 1000).toFixed(3)} s: ${what}`);
	};
	const processCount = random() < 0.5 ? 3 : 4;
	const faults: Faults = {
		pause: random() * 0.03,
		failBefore: random() < 0.5 ? random() * 0.02 : 0,
		failAfter: random() < 0.5 ? random() * 0.02 : 0,
		kill:
			random() < 0.35
				? {
						process: Math.floor(random() * processCount),
						atQuery: 1 + Math.floor(random() * 120),
					}
				: undefined,
		start: ((r) => (r < 0.05 ? 'empty' : r < 0.1 ? 'remains' : 'absent'))(random()),
	};
	const processes: Process[] = [];
	const byName = new Map<string, Process>();
	/**
	 * Keys the node said something about (a failed give-back or claim), or claimed by a process killed before the
	 * answer: unknown there is explained.
	 */
	const excused = new Set<string>();

	const model = new StoreModel({
		beforeQuery: async (query: Query) => {
			const process = byName.get(query.caller)!;
			process.queries++;
			if (faults.kill && processes[faults.kill.process] === process) {
				if (process.queries >= faults.kill.atQuery && !process.dead) {
					process.dead = true;
					seen.add('killed');
					// Its claim may be written and never answered: that key stays in flight, and later counts as unknown.
					if (process.claiming) excused.add(process.claiming);
					if (process.inside) seen.add('killed holding the lock');
				}
			}
			if (process.dead) await new Promise<never>(() => undefined);
			let delay = 1 + process.random() * 20;
			if (process.random() < faults.pause) {
				delay += 50 + process.random() * (maxPauseMs - 50);
				seen.add('paused');
			}
			await schedule.sleep(delay, () => !process.dead);
			if (process.random() < faults.failBefore) {
				seen.add('query failed before its commit');
				throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' });
			}
		},
		onRun: (query: Query) => {
			if (TRACE) {
				const lock = model.rows.get(LOCK_ROW);
				trace.push(
					`${schedule.now.toFixed(1)} ${query.caller} ${query.helper} ${query.step} ${query.row === LOCK_ROW ? 'lock' : 'node'} (lock row: ${lock ? (lock.data as string[]).length : 'absent'})${byName.get(query.caller)!.inside ? ' inside' : ''}`,
				);
			}
			if (query.row !== NODE_ROW || query.step === 'select') return;
			const writer = byName.get(query.caller)!;
			if (!writer.inside) fail(`${writer.name} wrote the node row outside a hold of the lock`);
			const others = processes.filter((p) => p !== writer && p.inside && !p.dead);
			if (others.length > 0)
				fail(
					`${writer.name} wrote the node row while ${others.map((p) => p.name).join(', ')} held the lock`,
				);
			if (!model.rows.has(LOCK_ROW))
				fail(`${writer.name} wrote the node row with no lock in the store`);
		},
		afterQuery: async (query: Query) => {
			const process = byName.get(query.caller)!;
			await schedule.sleep(process.random() * 5, () => !process.dead);
			if (query.step !== 'select' && process.random() < faults.failAfter) {
				seen.add('query failed after its commit');
				throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
			}
		},
	});
	const LOCK = 'invoice-service idempotency lock';
	if (faults.start === 'empty') model.rows.set(LOCK_ROW, { mode: 'entries', data: [] });
	if (faults.start === 'remains')
		model.rows.set(LOCK_ROW, {
			mode: 'entries',
			data: Array.from({ length: 14 }, (_, n) => hashOf(`${LOCK} ${n + 1}`)),
		});
	if (faults.start !== 'absent') seen.add(`lock row ${faults.start} at the start`);

	// What the service and the deliveries did, for the checks.
	const keys = Array.from({ length: 5 }, (_, n) => `event-${n}`);
	/** Sends that may have created the record, by key. */
	const mayBeCreated = new Map<string, number>();
	/** Keys another process gave up waiting for while their create went on. */
	const expiredWhileSent = new Set<string>();
	/** Keys in flight (answered new, not settled) and by whom. */
	const inFlight = new Map<string, Process>();
	let codes = 0;

	function makeProcess(name: string, offset: number, workload: boolean): Process {
		const own = generator(seed * 31 + processes.length + 7);
		const process = {
			name,
			random: own,
			dead: false,
			inside: false,
			queries: 0,
			done: !workload,
		} as Process;
		process.clock = {
			now: () => schedule.now + offset,
			sleep: async (ms) => await schedule.sleep(ms, () => !process.dead),
			random: own,
		};
		const helpers = model.helpersFor(WORKFLOW, NODE_ID, name);
		const code = version === 'today' ? { RowLock, KeyStore } : codeBefore(process.clock);
		const lock =
			version === 'today'
				? new RowLock(WORKFLOW, helpers as never, process.clock, new Map())
				: new code.RowLock(WORKFLOW, helpers as never);
		const watched = {
			hold: async <T>(
				prepare: () => Promise<unknown>,
				work: (stillHeld: () => void) => Promise<T>,
			): Promise<T> =>
				await lock.hold(prepare, async (stillHeld) => {
					process.inside = true;
					try {
						return await work(stillHeld);
					} finally {
						process.inside = false;
					}
				}),
		};
		const store = new code.KeyStore(watched as unknown as RowLock, () => undefined, process.clock);
		process.store =
			version === 'today'
				? store
				: ({
						claim: store.claim.bind(store),
						// The code before took the resend code in an options object.
						settle: async (row: NodeRow, key: string, outcome: Outcome, resendCode?: string) =>
							await store.settle(row, key, outcome, { code: resendCode } as never),
					} as unknown as KeyStore);
		process.row = { scope: NODE_ID, helpers: helpers as never, historySize: 10_000 };
		processes.push(process);
		byName.set(name, process);
		return process;
	}

	function answered(process: Process, key: string, answer: ClaimAnswer): void {
		if (TRACE) trace.push(`${schedule.now.toFixed(1)} ${process.name} claim ${key}: ${answer}`);
		const sent = mayBeCreated.get(key) ?? 0;
		if (answer === 'new') {
			if (sent > 0)
				fail(`${process.name}: "${key}" answered new after a send that may have created it`);
			const holder = inFlight.get(key);
			if (holder) fail(`${process.name}: "${key}" answered new while in flight in ${holder.name}`);
		}
		if (answer === 'created' && sent === 0)
			fail(`${process.name}: "${key}" answered created, never sent`);
		if (
			(answer === 'unknown' || answer === 'expired') &&
			sent === 0 &&
			!inFlight.has(key) &&
			!excused.has(key)
		)
			fail(`${process.name}: "${key}" answered ${answer}, never sent, and nothing said why`);
		if (answer === 'expired') {
			seen.add('a key expired in flight');
			if (inFlight.has(key)) expiredWhileSent.add(key);
		}
		if (answer === 'created') seen.add('a re-delivery found its key created');
	}

	async function deliver(process: Process, key: string): Promise<void> {
		// As idempotencyKeys.ts waits: from its second look on, the claim watches the flight (flightWatch.ts), and the
		// wait counts from the first look that saw the flight it watches. The code before counted it from the
		// delivery's start, and expired whatever was in flight.
		let watch: { sign?: string; since?: number } | undefined =
			version === 'today' ? undefined : { since: process.clock.now() };
		let delay = 100;
		const expiryCode = `X${++codes}`;
		for (;;) {
			const sentAt = process.clock.now();
			const expireFlight = watch?.since !== undefined && sentAt - watch.since >= FLIGHT_WAIT_MS;
			let answer: ClaimAnswer;
			try {
				process.claiming = key;
				answer = await process.store.claim(process.row, key, {
					codes: [],
					...(watch && version === 'today' ? { watch: { sign: watch.sign } } : {}),
					expireFlight,
					expiryCode,
				});
				process.claiming = undefined;
			} catch (error) {
				if (TRACE)
					trace.push(
						`${schedule.now.toFixed(1)} ${process.name} claim ${key} failed: ${(error as Error).message}`,
					);
				process.claiming = undefined;
				// The item fails, nothing sent; the error says the key may be left as it was written.
				excused.add(key);
				seen.add('a claim failed');
				return;
			}
			const flight = typeof answer === 'object' && 'flight' in answer ? answer : undefined;
			if (answer === 'flight' || flight) {
				if (version === 'before') watch ??= { since: process.clock.now() };
				else if (!flight) watch = {};
				else if (!flight.same) watch = { sign: flight.flight, since: process.clock.now() };
				await process.clock.sleep(delay + process.random() * delay);
				delay = Math.min(delay * 2, 500);
				continue;
			}
			answered(process, key, answer);
			if (answer !== 'new') return;
			inFlight.set(key, process);
			// The create: mostly quick; one in twenty slow (20–60 s: marked after the half wait, or after another
			// process gave up waiting for it).
			const pace = process.random();
			const slow = pace < 0.05;
			await process.clock.sleep(slow ? 20_000 + pace * 800_000 : 5 + pace * 300);
			if (slow) seen.add('a slow create');
			const outcome = process.random();
			if (outcome < 0.08) {
				if (TRACE) trace.push(`${schedule.now.toFixed(1)} ${process.name} release ${key}`);
				process.claiming = key; // a process killed now leaves the key in flight: unknown later
				await process.store.settle(process.row, key, 'released').catch(() => {
					excused.add(key);
					seen.add('a give-back failed');
				});
				process.claiming = undefined;
				// In flight in the store until the give-back is written (another process may give up on it meanwhile).
				inFlight.delete(key);
				return;
			}
			mayBeCreated.set(key, (mayBeCreated.get(key) ?? 0) + 1);
			if ((mayBeCreated.get(key) ?? 0) > 1) fail(`"${key}" sent twice`);
			const unknown = outcome < 0.16;
			if (TRACE)
				trace.push(
					`${schedule.now.toFixed(1)} ${process.name} sent ${key}: ${unknown ? 'unknown' : 'created'}`,
				);
			if (!unknown && expiredWhileSent.has(key)) seen.add('a key given up on, then marked created');
			await process.store
				.settle(
					process.row,
					key,
					unknown ? 'unknown' : 'created',
					unknown ? `C${++codes}` : undefined,
					sentAt + FLIGHT_WAIT_MS / 2,
				)
				.catch(() => seen.add('a mark failed'));
			if (inFlight.get(key) === process) inFlight.delete(key);
		}
	}

	for (let index = 0; index < processCount; index++) {
		const process = makeProcess(`p${index}`, Math.round((random() * 2 - 1) * 5000), true);
		const deliveries = 3 + Math.floor(random() * 4);
		const start = random() * 500;
		void (async () => {
			await schedule.sleep(start);
			for (let delivery = 0; delivery < deliveries; delivery++) {
				await deliver(process, keys[Math.floor(process.random() * keys.length)]);
				await process.clock.sleep(process.random() * 300);
			}
			process.done = true;
		})();
	}
	await schedule.run(() => processes.every((p) => p.done || p.dead), LIMIT_MS);
	for (const process of processes) {
		if (!process.done && !process.dead) fail(`${process.name} never finished`);
	}

	// Nothing that may be created is erased.
	const row = model.rows.get(NODE_ROW);
	const held = new Set(Array.isArray(row?.data) ? row.data : []);
	for (const [key] of mayBeCreated) {
		if (!held.has(hashOf(`claim:${key}`)) && !held.has(hashOf(`open:${key}`)))
			fail(`"${key}" may be created, and is erased from the store`);
	}

	// The store is left usable: a fresh process, with no faults, claims a fresh key.
	Object.assign(faults, { pause: 0, failBefore: 0, failAfter: 0, kill: undefined });
	const fresh = makeProcess('fresh', 0, true);
	let freshAnswer: string | undefined;
	void fresh.store
		.claim(fresh.row, 'fresh-key', { codes: [], expireFlight: false })
		.then((answer) => (freshAnswer = JSON.stringify(answer).replace(/"/g, '')))
		.catch((error: Error) => (freshAnswer = `failed: ${error.message}`));
	const freshFrom = schedule.now;
	await schedule.run(() => freshAnswer !== undefined, schedule.now + lockTiming.maxWaitMs + 10_000);
	if (freshAnswer !== 'new')
		fail(
			`a fresh claim after the run answered ${freshAnswer ?? 'nothing'} (the store is left blocked)`,
		);
	else if (schedule.now - freshFrom > lockTiming.leaseMs + 5_000)
		seen.add('the store healed within the lease');
	const queries = Object.values(model.counts).reduce((sum, n) => sum + n, 0);
	if (TRACE) console.log(trace.join('\n'));
	return { seed, violations, seen, queries };
}

/**
 * Seeds kept for issue 34's defects: each fails on the code before it (commit BEFORE, run in the same simulation)
 * with the violation named, and passes today. Clocks apart (1) made a live lock look dead: two holders (`sent
 * twice`, `new while in flight`); two waiters breaking a dead lock (2) left a row no lock could be read from, and
 * the store blocked for good ("used by another node") or erased a created key. Found by running the simulation over
 * the code before, where most seeds fail.
 */
const KEPT: Array<{ seed: number; defect: string; before: RegExp }> = [
	{
		seed: 1,
		defect: '1: two holders of the lock',
		before: /wrote the node row while p\d held the lock/,
	},
	{ seed: 26, defect: '1: a live lock broken, a second create', before: /"event-\d" sent twice/ },
	{
		seed: 5,
		defect: '1: a key answered new once it was sent',
		before: /answered new after a send/,
	},
	{
		seed: 20,
		defect: '2: the row poisoned, "used by another node"',
		before: /used by another node/,
	},
	{ seed: 97, defect: '2: a created key erased', before: /may be created, and is erased/ },
];

const SEEDS = Number(process.env.SIM_SEEDS ?? 2000);
const REPLAY = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);

describe('the Idempotency Keys in a simulated cluster (seeded: clocks apart, pauses, kills, failing queries)', () => {
	it.each(KEPT.map(({ seed, defect, before }) => [seed, defect, before] as const))(
		'kept seed %i (defect %s): a violation on the code before, none today',
		async (seed, _, before) => {
			const then = await simulate(seed, 'before');
			expect(then.violations.join('\n')).toMatch(before);
			const now = await simulate(seed);
			expect(now.violations).toEqual([]);
		},
	);

	it('300 seeds with pauses up to 35 s (past the 20 s a holder writes in, inside the lease): no violation', async () => {
		const failures: string[] = [];
		for (let seed = 1; seed <= 300; seed++) {
			const result = await simulate(seed, 'today', 35_000);
			if (result.violations.length > 0)
				failures.push(`seed ${seed}: ${result.violations.join('; ')}`);
		}
		expect(failures).toEqual([]);
	}, 300_000);

	it('the window docs/how-it-works.md names: seed 1075 with pauses up to 120 s writes the node row under another holder', async () => {
		const { violations } = await simulate(1075, 'today', 120_000);
		expect(violations.join('\n')).toMatch(/wrote the node row while p\d held the lock/);
	});

	it(`${REPLAY === undefined ? SEEDS : 1} seeds: no violation`, async () => {
		const seeds = REPLAY === undefined ? Array.from({ length: SEEDS }, (_, n) => n + 1) : [REPLAY];
		const failures: string[] = [];
		const situations = new Map<string, number>();
		for (const seed of seeds) {
			const result = await simulate(seed);
			for (const situation of result.seen)
				situations.set(situation, (situations.get(situation) ?? 0) + 1);
			if (result.violations.length > 0)
				failures.push(
					`seed ${seed} (replay: SIM_SEED=${seed} npx jest test/unit/exactly-once-simulation.test.ts --selectProjects unit):\n  ${result.violations.join('\n  ')}`,
				);
		}
		expect(failures).toEqual([]);
		// The faults happened: a simulation that never paused, killed or failed would prove nothing.
		if (REPLAY === undefined) {
			for (const situation of [
				'killed holding the lock',
				'paused',
				'query failed after its commit',
				'a key expired in flight',
				'a slow create',
				'a key given up on, then marked created',
			])
				expect(situations.get(situation) ?? 0).toBeGreaterThan(0);
		}
	}, 600_000);
});
