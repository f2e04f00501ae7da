// The exactly-once code users run, in a seeded simulation of an n8n cluster (issue 42): 3–8 processes, each with
// its own virtual clock (up to 5 s apart: the code must never compare them) and its own KeysProcess (its stores,
// its keys in flight, its lock's turns), sharing n8n's processed-data store as a model that behaves query by query
// as n8n's DeduplicationHelper does (test/support/store-model.ts, pinned to n8n by test/e2e-scale/store-model.test.ts).
// Each node run goes through the real ItemStep (actions/itemStep.ts), RunClaims and IdempotencyKeys, with the
// real RunRecord and run report; only the create is simulated (the service, run.ts). Checks per seed: see
// `Checks` below. test/simulation/cli.ts (`npm run sim`) and test/unit/exactly-once-simulation.test.ts run it.
import { AsyncLocalStorage } from 'node:async_hooks';

import type { IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { type KeysProcess } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { RowLock, type Clock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { UNKNOWN_OUTCOME_WAY_FORWARD } from '../../nodes/InvoiceService/transport/errors';
import { hashOf, StoreModel, type ModelHelpers, type Query } from '../support/store-model';
import { BOUNDS, FREE_BLOCK_MS } from './bounds';
import { generator, Schedule } from './schedule';
import { CODES, runNode, type NodeSpec, type RunResult, type Service } from './run';
import type { SwarmDraw } from './swarm';

/** What a set of seeds draws from: the knobs of `npm run sim`. */
export interface SimSettings {
	/** How many processes a seed runs (each seed draws within). */
	processes: { min: number; max: number };
	/** The most probability a seed draws of a pause at an await (before or after a query, during a create). */
	pauseP: number;
	/** The longest pause. */
	maxPauseMs: number;
	/** The most probability a seed draws, per query, that n8n's own work takes the process's pool connections. */
	starveP: number;
	/** Events delivered again (to the same process while the first runs, or another). */
	redeliver: boolean;
}

/** The widest settings the issue asks for: pauses up to n8n's pool acquire timeout. */
export const WIDEST: SimSettings = {
	processes: { min: 3, max: 8 },
	pauseP: 0.15,
	maxPauseMs: 20_000,
	starveP: 0.05,
	redeliver: true,
};

/** A violation, classified: a defect, or beyond a bound of bounds.ts (`beyond`: its name). */
export interface Violation {
	what: string;
	beyond?: string;
}

export interface SeedResult {
	seed: number;
	violations: Violation[];
	/** What happened (a simulation that never paused, killed or resent would prove nothing). */
	seen: Set<string>;
	trace: string[];
}

/** n8n's default pool of database connections per process (TypeORM's pg pool): its size and acquire timeout. */
const POOL_SIZE = 2;
const ACQUIRE_TIMEOUT_MS = 20_000;
/** Max Retry Wait and Timeout of the simulated nodes: their flight wait is these + the flight margin. */
const MAX_RETRY_WAIT_MS = 5_000;
const TIMEOUT_MS = 5_000;
/** Every live process must have finished by then (virtual time). */
const LIMIT_MS = 2 * 60 * 60_000;
const WORKFLOWS = ['wf-a', 'wf-b'];
const NODES_PER_WORKFLOW = 2;

/** One simulated n8n process. */
interface SimProcess {
	name: string;
	/** Queries of its that failed (injected, or no pool connection within the acquire timeout). */
	faults: number;
	random: () => number;
	clock: Clock;
	keys: KeysProcess;
	dead: boolean;
	queries: number;
	/** Its pool of database connections: free ones, and the queries waiting for one. */
	free: number;
	waiting: Array<(got: boolean) => void>;
	/** Its runs going on now: the events they hold (a kill leaves their keys as they are). */
	running: Set<string[]>;
	helpers: Map<string, ModelHelpers>;
	/** How many holds of a lock it has entered (a claim its own hold takes out again is no claim: claimsOrdered). */
	holds: number;
}

export async function simulateCluster(
	seed: number,
	settings: SimSettings,
	{ trace: tracing = false, swarm }: { trace?: boolean; swarm?: SwarmDraw } = {},
): Promise<SeedResult> {
	const random = generator(seed);
	const schedule = new Schedule();
	const violations: Violation[] = [];
	const seen = new Set<string>();
	const trace: string[] = [];
	/** A trace line, built only when tracing (`line` is called then). */
	const log = (line: () => string) => {
		if (tracing) trace.push(`${(schedule.now / 1000).toFixed(3)} ${line()}`);
	};
	const kinds = new Set<string>();
	/**
	 * Bounds of bounds.ts exceeded in this seed, by workflow: a violation in that workflow from then on is beyond that
	 * bound (the guarantee rests on it), unless `fail` is told otherwise.
	 */
	const exceeded: Array<{ bound: string; workflow: string; at: number }> = [];
	const exceed = (bound: string, workflow: string, what: () => string) => {
		if (!exceeded.some((e) => e.bound === bound && e.workflow === workflow))
			log(() => `BEYOND ${bound}: ${what()}`);
		// Every time (a false block looks for one within it).
		exceeded.push({ bound, workflow, at: schedule.now });
		seen.add(`beyond ${bound}`);
	};
	const fail = (what: string, beyond?: string | null) => {
		// Classified now: a bound exceeded in its workflow before it, or `beyond` (null: a defect whatever happened).
		const workflow = /wf-[a-z]/.exec(what)?.[0];
		const bound =
			beyond === undefined
				? exceeded.find((e) => workflow === undefined || e.workflow === workflow)?.bound
				: (beyond ?? undefined);
		log(() => `VIOLATION ${bound ? `(beyond ${bound}) ` : '(defect) '}${what}`);
		// The first of each kind (the same violation again says nothing new).
		const kind = what.replace(/p\d+|"[^"]*"|\d+(\.\d+)? s/g, '?');
		if (kinds.has(kind) || kinds.size >= 20) return;
		kinds.add(kind);
		violations.push({
			what: `${(schedule.now / 1000).toFixed(3)} s: ${what}`,
			...(bound ? { beyond: bound } : {}),
		});
	};

	// The seed's draws.
	// The seed's draws: a swarm seed's come from its draw (swarm.ts), the others' from the settings, in the order kept
	// seeds were found with.
	const { min, max } = settings.processes;
	const processCount = swarm ? swarm.processes : min + Math.floor(random() * (max - min + 1));
	const pauseP = swarm ? swarm.pauseP : random() * settings.pauseP;
	const maxPauseMs = swarm ? swarm.maxPauseMs : settings.maxPauseMs;
	const starveP = swarm ? swarm.starveP : random() * settings.starveP;
	const redeliver = swarm ? swarm.redeliver : settings.redeliver;
	const failBefore = random() < 0.5 ? random() * 0.01 : 0;
	const failAfter = random() < 0.5 ? random() * 0.01 : 0;
	const kills: Array<{ process: number; atCreate?: number; atQuery?: number }> = swarm
		? swarm.kills
		: random() < 0.35
			? [
					{
						process: Math.floor(random() * processCount),
						// Half the kills come during a create (its first or second), half at a query.
						...(random() < 0.5
							? { atCreate: 1 + Math.floor(random() * 2) }
							: { atQuery: 1 + Math.floor(random() * 200) }),
					},
				]
			: [];
	// A History Size small enough to trim and evict, or n8n's default.
	const historySize = swarm
		? swarm.historySize
		: random() < 0.5
			? 6 + Math.floor(random() * 20)
			: 10_000;
	const keysPerNode = swarm ? swarm.keysPerNode : 3 + Math.floor(random() * 5);
	const clockSkewMs = swarm ? swarm.clockSkewMs : 5_000;

	const processes: SimProcess[] = [];
	const byName = new Map<string, SimProcess>();
	/** Who is inside a hold of each workflow's lock (between taking it and giving it back). */
	const holders = new Map<string, Set<SimProcess>>();
	/** Node-row checks that trim (their removals are History Size's evictions), by caller and row. */
	const trimming = new Map<string, number>();
	/** Entries History Size evicted: a key whose entries went that way is forgotten, as documented... */
	const evicted = new Set<string>();
	/** ...unless it was younger than History Size then (`row key`): the docs promise it is remembered. */
	const evictedYoung = new Set<string>();
	const rowBefore = new Map<Query, string[]>();

	/** Off for the last check, a fresh process's claims. */
	let faultsOn = true;
	/** Each process's hold-ups: from, to (for the false blocks' classification). */
	const heldUp = new Map<SimProcess, Array<[number, number]>>();
	const holdUp = (process: SimProcess, ms: number) => {
		if (ms <= 0) return;
		let list = heldUp.get(process);
		if (!list) heldUp.set(process, (list = []));
		list.push([schedule.now, schedule.now + ms]);
	};
	const pause = (process: SimProcess, what: string): number => {
		if (!faultsOn || process.random() >= pauseP) return 0;
		seen.add(`paused ${what}`);
		const ms = process.random() * maxPauseMs;
		holdUp(process, ms);
		return ms;
	};
	const alive = (process: SimProcess) => () => !process.dead;
	/** One process held up alone (swarm.ts's stalls): whatever it awaits resumes only when the stall ends. */
	const stalled = async (process: SimProcess) => {
		if (!swarm || !faultsOn || swarm.stalls.length === 0) return;
		const index = processes.indexOf(process);
		for (const { process: which, atMs, forMs } of swarm.stalls) {
			if (which !== index || schedule.now < atMs || schedule.now >= atMs + forMs) continue;
			seen.add('one process stalled alone');
			const ms = atMs + forMs - schedule.now;
			log(() => `${process.name} stalled ${(ms / 1000).toFixed(1)} s`);
			holdUp(process, ms);
			await schedule.sleep(ms, alive(process));
		}
	};
	/** A pause drawn at an await (no event when there is none: the schedule's events are its cost). */
	const paused = async (process: SimProcess, what: string) => {
		const ms = pause(process, what);
		if (ms > 0) await schedule.sleep(ms, alive(process));
		await stalled(process);
	};
	/** PCT-style order (swarm.ts): a query held a quantum per rank below the top; change points drop a process. */
	let queryNumber = 0;
	let lowest = 0;
	const priority = new Map<SimProcess, number>();
	const byPriority = async (process: SimProcess) => {
		if (swarm?.scheduler !== 'pct' || !faultsOn) return;
		queryNumber++;
		if (swarm.changePoints.includes(queryNumber)) {
			priority.set(process, --lowest);
			seen.add('pct: a priority change point');
		}
		const own = priority.get(process) ?? 0;
		const rank = processes.filter((p) => !p.dead && (priority.get(p) ?? 0) > own).length;
		if (rank === 0) return;
		holdUp(process, rank * swarm.quantumMs);
		await schedule.sleep(rank * swarm.quantumMs, alive(process));
	};
	const die = (process: SimProcess, why: string) => {
		if (process.dead) return;
		process.dead = true;
		seen.add(why);
		log(() => `${process.name} killed (${why})`);
		for (const events of process.running) {
			for (const id of events) {
				excused.add(id);
				diedWith.add(id);
			}
		}
		// Its runs never end.
		pendingRuns -= process.running.size;
		if ([...holders.values()].some((inside) => inside.has(process)))
			seen.add('killed holding the lock');
		for (const waiter of process.waiting.splice(0)) waiter(false);
		restartBlocks(process);
		for (const workflow of WORKFLOWS) lockChanged(workflow);
	};

	/** A connection of the process's pool: false when none came within the acquire timeout. */
	const connection = async (process: SimProcess): Promise<boolean> => {
		if (process.free > 0) {
			process.free--;
			return true;
		}
		return await new Promise<boolean>((resolve) => {
			let settled = false;
			const waiter = (got: boolean) => {
				if (settled) return;
				settled = true;
				resolve(got);
			};
			process.waiting.push(waiter);
			schedule.at(schedule.now + ACQUIRE_TIMEOUT_MS, () => {
				const index = process.waiting.indexOf(waiter);
				if (index === -1) return;
				process.waiting.splice(index, 1);
				waiter(false);
			});
		});
	};
	const giveConnection = (process: SimProcess) => {
		const next = process.waiting.shift();
		if (next) next(true);
		else process.free++;
	};
	/** n8n's own work (saving executions, other nodes) takes connections of the process's pool for a while. */
	const starve = (process: SimProcess) => {
		seen.add('pool starved');
		const takes = 1 + Math.floor(process.random() * POOL_SIZE);
		const forMs = 1_000 + process.random() * 30_000;
		for (let n = 0; n < takes; n++) {
			void (async () => {
				if (!(await connection(process))) return;
				await schedule.sleep(forMs);
				giveConnection(process);
			})();
		}
	};

	/** The helper call a query belongs to: when the node sent it, when n8n read the row for it. */
	const calls = new AsyncLocalStorage<{ sentAt: number; readAt?: number }>();
	/** Each process's store calls under way (sent, not answered): a holder's write can land long after it was sent. */
	const inFlight = new Map<SimProcess, Set<{ sentAt: number }>>();
	/** A write landing late (bounds.ts): the DELETE, any other write, a lock row's write after its read. */
	const lateness = (query: Query, workflow: string, call: { sentAt: number; readAt?: number }) => {
		const late = schedule.now - call.sentAt;
		const what = (ms: number, since: string) => () =>
			`${query.caller} ${query.helper} ${query.step} "${query.row}" landed ${(ms / 1000).toFixed(1)} s after ${since}`;
		if (query.step === 'delete') {
			if (late > BOUNDS.deleteLate.ms)
				exceed(BOUNDS.deleteLate.name, workflow, what(late, 'it was sent'));
			return;
		}
		if (late > BOUNDS.writeLate.ms)
			exceed(BOUNDS.writeLate.name, workflow, what(late, 'it was sent'));
		const lockRow = !query.row.includes(' n:');
		const sinceRead = call.readAt === undefined ? 0 : schedule.now - call.readAt;
		if (lockRow && sinceRead > BOUNDS.takeLate.ms)
			exceed(BOUNDS.takeLate.name, workflow, what(sinceRead, "n8n's read of the row"));
	};
	/**
	 * Each node row's keys by their last claim (a write adding `claim:<key>` that stays: a key sent, or resent), as a
	 * number that grows with each claim: a key is younger than History Size while fewer than History Size other keys
	 * were claimed after it (docs/reference.md, History Size: keys sent, made unknown or resent). A claim that finds
	 * its key unknown adds `claim:` and its own hold's removal takes it out again: nothing is sent, so it is no claim
	 * (swarm seed 32336: a re-delivery that found its key unknown counted as its claim, and the key, sent long
	 * before, was called young when History Size forgot it).
	 */
	const claimSeq = new Map<string, Map<string, number>>();
	let claims = 0;
	/** The claim last counted for a key of a row (`row key`): whose, in which hold, and the key's number before it. */
	const lastClaim = new Map<string, { process: SimProcess; hold: number; before?: number }>();
	const claimsOrdered = (query: Query, before: string[] | undefined) => {
		const { row } = query;
		const after = model.rows.get(row)?.data;
		if (!Array.isArray(after)) return;
		const process = byName.get(query.caller)!;
		let seqs = claimSeq.get(row);
		if (!seqs) claimSeq.set(row, (seqs = new Map()));
		const was = new Set(before ?? []);
		for (const entry of after) {
			const key = CLAIMS.get(entry);
			if (key === undefined || was.has(entry)) continue;
			lastClaim.set(`${row} ${key}`, { process, hold: process.holds, before: seqs.get(key) });
			seqs.set(key, ++claims);
		}
		if (query.helper !== 'removeProcessed') return;
		const now = new Set(after);
		for (const entry of was) {
			const key = CLAIMS.get(entry);
			if (key === undefined || now.has(entry)) continue;
			const last = lastClaim.get(`${row} ${key}`);
			if (last?.process !== process || last.hold !== process.holds) continue;
			lastClaim.delete(`${row} ${key}`);
			if (last.before === undefined) seqs.delete(key);
			else seqs.set(key, last.before);
		}
	};
	/** Fewer than History Size other keys claimed in its row after its last claim. */
	const isYoung = (row: string, key: string) => {
		const seqs = claimSeq.get(row);
		const seq = seqs?.get(key);
		if (seq === undefined) return false;
		let after = 0;
		for (const other of seqs!.values()) if (other > seq) after++;
		return after < historySize;
	};

	const model = new StoreModel({
		beforeQuery: async (query: Query) => {
			const process = byName.get(query.caller)!;
			process.queries++;
			if (
				kills.some(
					(kill) => processes[kill.process] === process && process.queries === kill.atQuery,
				)
			)
				die(process, 'killed at a query');
			if (process.dead) await new Promise<never>(() => undefined);
			if (faultsOn && process.random() < starveP) starve(process);
			await paused(process, 'before a query');
			await byPriority(process);
			if (!(await connection(process))) {
				if (process.dead) await new Promise<never>(() => undefined);
				faulted(process);
				seen.add('a query timed out waiting for a connection');
				log(
					() =>
						`${process.name} ${query.helper} ${query.step} "${query.row}": no connection within 20 s`,
				);
				throw new Error('timeout exceeded when trying to connect');
			}
			await schedule.sleep(1 + process.random() * 20, alive(process));
			giveConnection(process);
			if (faultsOn && process.random() < failBefore) {
				faulted(process);
				seen.add('a query failed before its commit');
				log(
					() =>
						`${process.name} ${query.helper} ${query.step} "${query.row}": failed before its commit`,
				);
				throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' });
			}
		},
		onRun: (query: Query) => {
			const call = calls.getStore();
			if (query.step === 'select') {
				if (call) call.readAt = schedule.now;
				return;
			}
			const workflow = query.row.split(' ')[0];
			// A lock row's insert is a taking (its lateness is the lock's own); a node row's is a write like any other.
			if (call && (query.step !== 'insert' || query.row.includes(' n:')))
				lateness(query, workflow, call);
			const data = model.rows.get(query.row)?.data;
			// What a write removes (a trim's removals are evictions) or adds (claims, for History Size's order) is read
			// off the row before it.
			if (Array.isArray(data) && query.row.includes(' n:')) rowBefore.set(query, [...data]);
			log(
				() =>
					`${query.caller} ${query.helper} ${query.step} "${query.row}" (${Array.isArray(data) ? data.length : 'absent'})`,
			);
			if (!query.row.includes(' n:')) return;
			const writer = byName.get(query.caller)!;
			const inside = holders.get(workflow) ?? new Set();
			if (!inside.has(writer)) fail(`${writer.name} wrote ${query.row} outside a hold of its lock`);
			const others = [...inside].filter((p) => p !== writer && !p.dead);
			if (others.length > 0) {
				// Another holder still inside its hold only by a write sent past write-late (the lock's lease ran out on
				// it): that write lands under the next holder, beyond the bound, even if it has not landed yet.
				// Or this write itself, sent inside its hold, landing past write-late (its process stalled meanwhile).
				const lateWriter =
					(call !== undefined && schedule.now - call.sentAt > BOUNDS.writeLate.ms) ||
					others.some((other) =>
						[...(inFlight.get(other) ?? [])].some(
							({ sentAt }) => schedule.now - sentAt > BOUNDS.writeLate.ms,
						),
					);
				fail(
					`${writer.name} wrote ${query.row} while ${others.map((p) => p.name).join(', ')} held the lock`,
					lateWriter ? BOUNDS.writeLate.name : undefined,
				);
			}
			if (!model.rows.has(`${workflow} `))
				fail(`${writer.name} wrote ${query.row} with no lock in the store`);
		},
		afterQuery: async (query: Query) => {
			const before = rowBefore.get(query);
			rowBefore.delete(query);
			if (tracing && query.step !== 'select' && query.row.includes(' n:')) {
				const after = model.rows.get(query.row)?.data;
				const now = new Set(Array.isArray(after) ? after : []);
				const was = new Set(before ?? []);
				const named = (entries: string[]) =>
					entries.map((entry) => NAMES.get(entry) ?? '#').join(' ');
				log(
					() =>
						`  ${query.caller} "${query.row}": +[${named([...now].filter((e) => !was.has(e)))}] -[${named([...was].filter((e) => !now.has(e)))}]`,
				);
			}
			if (query.step !== 'select' && query.row.includes(' n:')) claimsOrdered(query, before);
			if (before && query.step === 'update' && trimming.get(`${query.caller} ${query.row}`)) {
				const after = new Set(model.rows.get(query.row)?.data as string[]);
				for (const entry of before) {
					if (!after.has(entry)) {
						evicted.add(`${query.row} ${entry}`);
						seen.add('History Size evicted an entry');
						const key = STATES.get(entry);
						if (key !== undefined && isYoung(query.row, key)) {
							evictedYoung.add(`${query.row} ${key}`);
							seen.add('History Size evicted a young key');
						}
					}
				}
			}
			const process = byName.get(query.caller)!;
			await paused(process, 'after a query');
			if (faultsOn && query.step !== 'select' && process.random() < failAfter) {
				faulted(process);
				seen.add('a query failed after its commit');
				log(
					() =>
						`${process.name} ${query.helper} ${query.step} "${query.row}": failed after its commit`,
				);
				throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
			}
		},
	});

	/** The helpers n8n gives the node `nodeId` of `workflow` in this process (trims noted for evictions). */
	const helpersOf = (process: SimProcess, workflow: string, nodeId: string): ModelHelpers => {
		const id = `${workflow} ${nodeId}`;
		let helpers = process.helpers.get(id);
		if (!helpers) {
			const raw = model.helpersFor(workflow, nodeId, process.name);
			const row = `${workflow} n:${nodeId}`;
			// Each call's time sent, for the bounds' lateness (its queries run inside it).
			const sent = async <T>(run: () => Promise<T>) => {
				const call = { sentAt: schedule.now };
				let under = inFlight.get(process);
				if (!under) inFlight.set(process, (under = new Set()));
				under.add(call);
				try {
					return await calls.run(call, run);
				} finally {
					under.delete(call);
				}
			};
			helpers = {
				getProcessedDataCount: async (scope, options) =>
					await sent(async () => await raw.getProcessedDataCount(scope, options)),
				removeProcessed: async (items, scope, options) =>
					await sent(async () => await raw.removeProcessed(items, scope, options)),
				clearAllProcessedItems: async (scope, options) =>
					await sent(async () => await raw.clearAllProcessedItems(scope, options)),
				checkProcessedAndRecord: async (items, scope, options) => {
					const trims = scope === 'node' && options.maxEntries !== undefined;
					const id = `${process.name} ${row}`;
					if (trims) trimming.set(id, (trimming.get(id) ?? 0) + 1);
					try {
						return await sent(async () => await raw.checkProcessedAndRecord(items, scope, options));
					} finally {
						if (trims) trimming.set(id, trimming.get(id)! - 1);
					}
				},
			};
			process.helpers.set(id, helpers);
		}
		return helpers;
	};

	function makeProcess(name: string, offset: number): SimProcess {
		const own = generator(seed * 31 + processes.length + 7);
		const process = {
			name,
			faults: 0,
			random: own,
			dead: false,
			queries: 0,
			free: POOL_SIZE,
			waiting: [],
			running: new Set(),
			helpers: new Map(),
			holds: 0,
		} as unknown as SimProcess;
		process.clock = {
			now: () => schedule.now + offset,
			// A pause at any await: the process's waits end late too.
			sleep: async (ms) => {
				await schedule.sleep(ms + pause(process, 'in a wait'), alive(process));
				await stalled(process);
			},
			random: own,
		};
		const turns = new Map<string, Promise<void>>();
		process.keys = {
			clock: process.clock,
			timing: KEYS_TIMING,
			stores: new Map(),
			inFlight: new Map(),
			codesLeftIn: new Map(),
			lockOf: (workflowId, helpers) => new WatchedLock(workflowId, helpers, process, turns),
		};
		if (swarm) priority.set(process, swarm.priorities[processes.length] ?? 0);
		processes.push(process);
		byName.set(name, process);
		return process;
	}

	/** The real RowLock, watched: who is inside a hold, for the check of two holders. */
	class WatchedLock extends RowLock {
		constructor(
			private readonly workflow: string,
			helpers: IExecuteFunctions['helpers'],
			private readonly process: SimProcess,
			turns: Map<string, Promise<void>>,
		) {
			super(workflow, helpers, process.clock, turns);
		}

		override async hold<T>(
			prepare: () => Promise<unknown>,
			work: (stillHeld: () => void) => Promise<T>,
		): Promise<T> {
			const { workflow, process } = this;
			const waiting = lockWaiters(workflow);
			if (!waiting.has(process)) waitStarts.set(`${workflow} ${process.name}`, schedule.now);
			waiting.set(process, (waiting.get(process) ?? 0) + 1);
			let waits = true;
			const waitStart = schedule.now;
			const waited = () => {
				if (!waits) return;
				waits = false;
				waitSpans.push({ workflow, process, from: waitStart, to: schedule.now });
				const left = waiting.get(process)! - 1;
				if (left > 0) waiting.set(process, left);
				else {
					waiting.delete(process);
					waitStarts.delete(`${workflow} ${process.name}`);
				}
			};
			lockChanged(workflow);
			try {
				return await super.hold(prepare, async (stillHeld) => {
					let inside = holders.get(workflow);
					if (!inside) holders.set(workflow, (inside = new Set()));
					inside.add(process);
					process.holds++;
					waited();
					lockChanged(workflow);
					try {
						return await work(stillHeld);
					} finally {
						inside.delete(process);
						lockChanged(workflow);
					}
				});
			} finally {
				waited();
				lockChanged(workflow);
			}
		}
	}

	/**
	 * False blocks: how long claims waited for each workflow's lock while no live process held it (since a live one
	 * last did), and who waited meanwhile. Beyond FREE_BLOCK_MS it is a violation: a defect, unless every waiter was
	 * held up beyond the held-up bound again and again (no clean stretch of a lease: mark, lease and grace).
	 */
	const waiters = new Map<string, Map<SimProcess, number>>();
	/** Each wait for a lock that ended: who, from, to (the false blocks' classification). */
	const waitSpans: Array<{ workflow: string; process: SimProcess; from: number; to: number }> = [];
	const waitStarts = new Map<string, number>();
	const lockWaiters = (workflow: string) => {
		let waiting = waiters.get(workflow);
		if (!waiting) waiters.set(workflow, (waiting = new Map()));
		return waiting;
	};
	const blocked = new Map<
		string,
		{ ms: number; since?: number; first: number; who: Set<SimProcess>; told: boolean }
	>();
	const lockChanged = (workflow: string) => {
		const live = (p: SimProcess) => !p.dead;
		const held = [...(holders.get(workflow) ?? [])].some(live);
		const waiting = [...lockWaiters(workflow).keys()].filter(live);
		let block = blocked.get(workflow);
		if (held) {
			blocked.delete(workflow);
			return;
		}
		if (waiting.length === 0) {
			if (block?.since !== undefined) {
				block.ms += schedule.now - block.since;
				block.since = undefined;
			}
			return;
		}
		if (!block) {
			block = { ms: 0, first: schedule.now, who: new Set(), told: false };
			blocked.set(workflow, block);
		}
		for (const process of waiting) block.who.add(process);
		if (block.since === undefined) block.since = schedule.now;
		const ms = block.ms + schedule.now - block.since;
		if (ms > FREE_BLOCK_MS && !block.told) {
			block.told = true;
			falseBlock(workflow, block, ms);
		}
		// Looked at again when the bound would pass with nothing changed.
		if (!block.told)
			schedule.at(schedule.now + FREE_BLOCK_MS - ms + 1, () => lockChanged(workflow));
	};
	/** A waiter's query failed: the store is not healthy, and the block's time starts again. */
	const faulted = (process: SimProcess) => {
		process.faults++;
		restartBlocks(process);
	};
	/** A waiter failed or died: what it watched is lost, and the block's time starts again. */
	const restartBlocks = (process: SimProcess) => {
		for (const [workflow, block] of blocked) {
			if (!lockWaiters(workflow).has(process)) continue;
			block.ms = 0;
			block.first = schedule.now;
			if (block.since !== undefined) block.since = schedule.now;
		}
	};
	const falseBlock = (
		workflow: string,
		block: { first: number; who: Set<SimProcess> },
		ms: number,
	) => {
		// Beyond held-up when no waiter had, within one of its waits in the block, FREE_BLOCK_MS without a hold-up
		// longer than the bound (a pause, a stall, a query held back: each takes a take-over's turn away); a defect
		// when one had it and the lock stayed blocked.
		const spans = [
			...waitSpans.filter((span) => span.workflow === workflow && span.to >= block.first),
			// A dead process waits for nothing: only the live waiters' waits count.
			...[...lockWaiters(workflow).keys()]
				.filter((process) => !process.dead)
				.map((process) => ({
					process,
					from: waitStarts.get(`${workflow} ${process.name}`) ?? block.first,
					to: schedule.now,
				})),
		];
		const heldThroughout = spans.every(({ process, from, to }) => {
			let clean = Math.max(from, block.first);
			const long = (heldUp.get(process) ?? []).filter(([a, b]) => b - a > BOUNDS.heldUp.ms);
			for (const [heldFrom, heldTo] of long) {
				if (heldTo < clean || heldFrom > to) continue;
				if (heldFrom - clean >= FREE_BLOCK_MS) return false;
				clean = Math.max(clean, heldTo);
			}
			return to - clean < FREE_BLOCK_MS;
		});
		seen.add('a free lock blocked claims past the bound');
		fail(
			`${workflow}'s lock, held by no live process, blocked claims for ${(ms / 1000).toFixed(0)} s (more than ${FREE_BLOCK_MS / 1000} s: a false block)`,
			heldThroughout
				? BOUNDS.heldUp.name
				: // A late write to the lock's row within the block (a mark, a take-over, landing over others' writes:
					// markers lost, takers losing) is what kept it blocked; else a defect.
					(exceeded.find((e) => e.workflow === workflow && e.at >= block.first)?.bound ?? null),
		);
	};

	// The service: what each event's creates did.
	interface EventState {
		sends: number;
		running: number;
		created: boolean;
	}
	const events = new Map<string, EventState>();
	const eventOf = (id: string) => {
		let event = events.get(id);
		if (!event) events.set(id, (event = { sends: 0, running: 0, created: false }));
		return event;
	};
	/** Events whose never-sent unknown answer the node explained (a kill, a store failure, a warning). */
	const excused = new Set<string>();
	/**
	 * Events of runs a kill ended: a resend code their run gave the key dies with the run's error, untold (n8n shows
	 * the execution as crashed); later deliveries fail as unknown, pointing at that execution.
	 */
	const diedWith = new Set<string>();
	/** Resend codes users were told, by event. */
	const told = new Map<string, Set<string>>();
	/** Events answered unknown without a code of their own (an earlier execution gave it). */
	const unknownWithoutCode = new Set<string>();
	const isEvicted = (row: string, key: string) =>
		evicted.has(`${row} ${hashOf(`claim:${key}`)}`) ||
		evicted.has(`${row} ${hashOf(`open:${key}`)}`);
	/** Forgotten as documented: evicted, and never while younger than History Size. */
	const isForgotten = (row: string, key: string) =>
		isEvicted(row, key) && !evictedYoung.has(`${row} ${key}`);
	/** What a violation says of a key evicted young (History Size did not keep what the docs promise). */
	const young = (row: string, key: string) =>
		evictedYoung.has(`${row} ${key}`)
			? ` (History Size ${historySize} evicted it with fewer than ${historySize} other keys claimed after it)`
			: '';
	const rowOfId = (id: string) => id.slice(0, id.lastIndexOf('/'));
	const keyOfId = (id: string) => id.slice(id.lastIndexOf('/') + 1);
	const creates = new Map<SimProcess, number>();

	const service: Service = {
		create: async (processName, id) => {
			const process = byName.get(processName)!;
			const event = eventOf(id);
			const row = rowOfId(id);
			const key = keyOfId(id);
			if (!isForgotten(row, key)) {
				if (event.running > 0)
					fail(`"${id}" sent by ${process.name} while another send of it runs${young(row, key)}`);
				else if (event.created)
					fail(`"${id}" sent by ${process.name} after it was created${young(row, key)}`);
			}
			event.sends++;
			event.running++;
			const count = (creates.get(process) ?? 0) + 1;
			creates.set(process, count);
			// Mostly quick; some take the longest a create can (the last try starts by Max Retry Wait + 15 s after the
			// first, and each try ends within Timeout: request.ts).
			const longest = MAX_RETRY_WAIT_MS + 15_000 + TIMEOUT_MS;
			const slow = process.random() < 0.1;
			const takes = slow ? process.random() * longest : 5 + process.random() * 300;
			if (slow) seen.add('a slow create');
			const actsAt = process.random() * takes;
			const outcome = process.random();
			const acts = outcome < 0.8 || (outcome >= 0.87 && process.random() < 0.5);
			log(() => `${process.name} sends "${id}" (${Math.round(takes)} ms)`);
			void schedule.sleep(actsAt).then(() => {
				if (acts) event.created = true;
			});
			const killedNow = kills.some(
				(kill) => processes[kill.process] === process && kill.atCreate === count,
			);
			const done = schedule.sleep(takes).then(() => event.running--);
			if (killedNow) {
				await schedule.sleep(process.random() * takes);
				die(process, 'killed during a create');
				await new Promise<never>(() => undefined);
			}
			await done;
			await paused(process, 'during a create');
			if (process.dead) await new Promise<never>(() => undefined);
			log(
				() =>
					`${process.name} sent "${id}": ${outcome < 0.8 ? 'created' : outcome < 0.87 ? 'refused' : `no answer (${acts ? 'created' : 'not created'})`}`,
			);
			if (outcome < 0.8) return { id: `record-${id}` };
			if (outcome < 0.87) {
				seen.add('a create refused, its key given back');
				throw new Error('refused: nothing created');
			}
			seen.add('an unknown outcome');
			// As request.ts makes it (nodeError.ts): the way forward that the item step gives its resend code.
			const unknown = new NodeOperationError(SERVICE_NODE, 'No answer from the service', {
				description: UNKNOWN_OUTCOME_WAY_FORWARD,
			});
			unknown.context.serviceMayHaveActed = true;
			throw unknown;
		},
	};

	const nodes: NodeSpec[] = WORKFLOWS.flatMap((workflow) =>
		Array.from({ length: NODES_PER_WORKFLOW }, (_, n) => ({
			workflow,
			nodeId: `node-${n}`,
			settings: {
				historySize,
				createWaitMs: MAX_RETRY_WAIT_MS + TIMEOUT_MS,
				keyField: 'Idempotency Key',
				purpose: 'idempotency' as const,
			},
		})),
	);
	const rowOfNode = (node: NodeSpec) => `${node.workflow} n:${node.nodeId}`;

	/** Resend codes users left in the option, by node row (swarm: later runs list them). */
	const leftIn = new Map<string, Set<string>>();
	/** Runs still to finish (the simulation ends when none is left, or at the limit). */
	let pendingRuns = 0;
	let resends = 0;

	/**
	 * What the run's items were told, in what n8n keeps (run.ts: the thrown error, or the hints and warnings, or each
	 * error item under Continue): their codes, their unknowns, their excuses. A store failure told while the process's
	 * queries all went through (none failed, none waited out the pool) is a false block.
	 */
	const heard = (
		node: NodeSpec,
		keys: string[],
		result: RunResult,
		process: SimProcess,
		since: { at: number; faults: number },
	) => {
		const row = rowOfNode(node);
		for (const { itemIndex, text, codes: itsCodes, storeFailure } of result.told) {
			const id = `${row}/${keys[itemIndex]}`;
			if (storeFailure) {
				excused.add(id);
				// A claim refused as n8n's database's (lockErrors.ts) with none of the process's queries failing.
				if (process.faults === since.faults && /n8n's database could not check/.test(text)) {
					// Excused when the process was held up for seconds in its run (a hold's time ran out on it).
					const heldMs = (heldUp.get(process) ?? []).reduce(
						(sum, [from, to]) => sum + Math.max(0, to - Math.max(from, since.at)),
						0,
					);
					const held = heldMs > 2_000;
					fail(
						`"${id}" told n8n's database failed, though none of ${process.name}'s queries failed in its run: a false block`,
						held ? BOUNDS.heldUp.name : undefined,
					);
				}
			}
			for (const code of itsCodes) {
				let codes = told.get(id);
				if (!codes) told.set(id, (codes = new Set()));
				codes.add(code);
			}
			if (UNKNOWN_KEY.test(text)) {
				seen.add('an item failed as unknown');
				if ((text.match(CODES) ?? []).length === 0) unknownWithoutCode.add(id);
			}
		}
		if (result.told.length < new Set(result.errors.map((e) => e.itemIndex)).size)
			seen.add("a run's failed items not all in what n8n keeps");
		const notWritten = result.counts.keysNotWritten;
		for (const itemIndex of [
			...notWritten.notMarked,
			...notWritten.notGivenBack,
			...notWritten.leftInFlight,
		])
			excused.add(`${row}/${keys[itemIndex]}`);
		if (notWritten.expiredUnsent.length > 0) seen.add('a claim ahead gave up, warned');
		const warned = Object.entries(notWritten).filter(([, items]) => items.length > 0);
		if (warned.length > 0) log(() => `  warned: ${JSON.stringify(Object.fromEntries(warned))}`);
		if (result.counts.resent.length > 0) seen.add('an unknown outcome resent with its code');
		if (result.counts.alreadyCreated > 0) seen.add('a delivery went to Already Created');
	};

	/** One run of a node in a process (on the process that is given, or a live one when it starts). */
	const startRun = (
		at: number,
		node: NodeSpec,
		keys: string[],
		codes: string[],
		chooseProcess: () => SimProcess | undefined,
		executeData: Record<string, unknown> = {},
	) => {
		pendingRuns++;
		schedule.at(at, () => {
			const process = chooseProcess();
			if (!process || process.dead) {
				pendingRuns--;
				return;
			}
			// Codes users left in the option (swarm): every later run of the node lists them.
			const left = leftIn.get(rowOfNode(node));
			if (left && left.size > 0) {
				codes = [...new Set([...codes, ...left])];
				seen.add('a run listed codes left in the option');
			}
			const continueOnFail = swarm ? process.random() < swarm.continueOnFailP : false;
			if (continueOnFail) seen.add('a run under continueOnFail');
			const since = { at: schedule.now, faults: process.faults };
			const ids = keys.map((key) => `${rowOfNode(node)}/${key}`);
			process.running.add(ids);
			log(
				() =>
					`${process.name} runs ${rowOfNode(node)} [${keys.join(' ')}]${codes.length > 0 ? ` codes ${codes.join(' ')}` : ''}`,
			);
			void runNode({
				process: { name: process.name, keys: process.keys, clock: process.clock },
				helpers: helpersOf(process, node.workflow, node.nodeId),
				node,
				keys,
				codes,
				executeData,
				continueOnFail,
				service,
				timings: { maxRetryWaitMs: MAX_RETRY_WAIT_MS, timeoutMs: TIMEOUT_MS },
				concurrency: process.random() < 0.3 ? 2 : 1,
			}).then((result) => {
				// A run its process's kill ended is no longer counted (die), and no one hears of it.
				if (process.dead) return;
				process.running.delete(ids);
				pendingRuns--;
				heard(node, keys, result, process, since);
				log(() => `${process.name} ran ${rowOfNode(node)} [${keys.join(' ')}]`);
				for (const { itemIndex, text } of result.errors) log(() => `  item ${itemIndex}: ${text}`);
				for (const { itemIndex, codes: itsCodes, text } of result.told)
					log(() => `  told item ${itemIndex} (${itsCodes.join(' ') || 'no code'}): ${text}`);
				followUp(node, keys, result, process);
			});
		});
	};
	const liveProcess = () => {
		const live = processes.filter((p) => !p.dead && p.name !== 'fresh');
		return live.length > 0 ? live[Math.floor(random() * live.length)] : undefined;
	};

	/**
	 * What users do after an unknown outcome: check the service; if the record is not there, enter the resend code
	 * they were told (a new execution, or a retry of the failed one) — and sometimes leave it in the option (stale).
	 */
	const followUp = (node: NodeSpec, keys: string[], result: RunResult, ranOn: SimProcess) => {
		for (const { itemIndex, codes: itsCodes } of result.told) {
			const key = keys[itemIndex];
			const id = `${rowOfNode(node)}/${key}`;
			const codes = [...itsCodes, ...(told.get(id) ?? [])];
			if (codes.length === 0 || resends >= 6) continue;
			resends++;
			const code = codes[Math.floor(random() * codes.length)];
			const at = schedule.now + 1_000 + random() * 90_000;
			const retry = random() < 0.4;
			// The user's look at the service is pending like a run: the simulation ends after it.
			pendingRuns++;
			schedule.at(at, () => {
				pendingRuns--;
				if (eventOf(id).created) return;
				seen.add('a user entered a resend code');
				if (swarm && random() < swarm.codesLeftIn) {
					const row = rowOfNode(node);
					leftIn.set(row, new Set([...(leftIn.get(row) ?? []), code]));
				}
				// A retry of the failed execution: its own copy of the record n8n saved with it.
				if (retry && result.saved) {
					const copy = JSON.parse(JSON.stringify(result.saved)) as Record<string, unknown>;
					startRun(schedule.now, node, keys, [code], liveProcess, copy);
				} else startRun(schedule.now, node, [key], [code], liveProcess);
				if (random() < 0.3) {
					seen.add('a stale code entered again');
					startRun(schedule.now + random() * 120_000, node, [key], [code], liveProcess);
				}
			});
		}
		if (redeliver && result.errors.length > 0 && random() < 0.3) {
			seen.add('a failed run delivered again');
			startRun(schedule.now + random() * 30_000, node, keys, [], () =>
				random() < 0.5 ? ranOn : liveProcess(),
			);
		}
	};

	for (let index = 0; index < processCount; index++) {
		const process = makeProcess(`p${index}`, Math.round((random() * 2 - 1) * clockSkewMs));
		let at = random() * 2_000;
		const runs = 1 + Math.floor(random() * 3);
		for (let run = 0; run < runs; run++) {
			const node = nodes[Math.floor(random() * nodes.length)];
			const itemCount = 1 + Math.floor(random() * 5);
			const keys = Array.from(
				{ length: itemCount },
				() => `event-${Math.floor(random() * keysPerNode)}`,
			);
			startRun(at, node, keys, [], () => process);
			if (redeliver && random() < 0.4) {
				// The same events again: queued in the same process while the first runs, or in another.
				const same = random() < 0.5;
				if (same) seen.add('a duplicate queued in one process');
				startRun(at + random() * 2_000, node, keys, [], same ? () => process : liveProcess);
			}
			at += random() * 5_000;
		}
	}
	await schedule.run(() => pendingRuns === 0, LIMIT_MS);
	if (pendingRuns > 0) fail(`${pendingRuns} run(s) never finished`);

	// What the store holds at the end, for every event.
	for (const [id, event] of events) {
		const row = rowOfId(id);
		const key = keyOfId(id);
		if (isForgotten(row, key)) continue;
		const data = model.rows.get(row)?.data;
		const held = new Set(Array.isArray(data) ? data : []);
		const claimed = held.has(hashOf(`claim:${key}`));
		const open = held.has(hashOf(`open:${key}`));
		if (event.created && !claimed && !open)
			fail(`"${id}" was created, and is erased from the store${young(row, key)}`);
		if (open && !claimed) {
			const codes = [...(told.get(id) ?? [])];
			if (!codes.some((code) => held.has(hashOf(`code:${code} ${key}`)))) {
				if (diedWith.has(id)) seen.add('a kill left an unknown key with a code no one was told');
				else
					fail(`"${id}" is unknown, and no one was told a resend code it takes${young(row, key)}`);
			}
		}
	}
	for (const id of unknownWithoutCode) {
		if (
			(events.get(id)?.sends ?? 0) === 0 &&
			!excused.has(id) &&
			!isForgotten(rowOfId(id), keyOfId(id))
		)
			fail(
				`"${id}" was never sent, and an item was told its outcome is unknown without a word why`,
			);
	}
	for (const [id, codes] of told) {
		if ((events.get(id)?.sends ?? 0) === 0 && codes.size > 0 && !excused.has(id))
			seen.add('a never-sent key given a resend code');
	}

	// The store is left usable: a fresh process, with no faults, claims a fresh key in every node's row.
	faultsOn = false;
	const fresh = makeProcess('fresh', 0);
	let answered = 0;
	const answers: string[] = [];
	for (const node of nodes) {
		void runNode({
			process: { name: fresh.name, keys: fresh.keys, clock: fresh.clock },
			helpers: helpersOf(fresh, node.workflow, node.nodeId),
			node,
			keys: ['fresh-key'],
			codes: [],
			executeData: {},
			service: { create: async () => ({ id: 'fresh' }) },
			timings: { maxRetryWaitMs: MAX_RETRY_WAIT_MS, timeoutMs: TIMEOUT_MS },
			concurrency: 1,
		}).then((result) => {
			answered++;
			if (result.errors.length > 0) answers.push(`${rowOfNode(node)}: ${result.errors[0].text}`);
		});
	}
	await schedule.run(
		() => answered === nodes.length,
		// A lock left dead is taken over within the promised time (bounds.ts), and the claim is answered.
		schedule.now + FREE_BLOCK_MS + 10_000,
	);
	if (answered < nodes.length)
		fail('a fresh claim after the run never answered (the store is left blocked)');
	for (const answer of answers)
		fail(`a fresh claim after the run failed (the store is left blocked): ${answer}`);
	return { seed, violations, seen, trace };
}

/** The node an error of the simulated service names. */
const SERVICE_NODE = {
	id: 'service',
	name: 'Invoice Service',
	type: 'n8n-nodes-invoice-service.invoiceService',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
} as INode;
/** The simulation's keys (swarm.ts draws up to 30 a node). */
const KEYS = Array.from({ length: 40 }, (_, n) => `event-${n}`);
/** The states' entries of the simulation's keys, by hash (for the trace). */
const NAMES = new Map(
	KEYS.flatMap((key) =>
		['claim', 'open'].map((state) => [hashOf(`${state}:${key}`), `${state}:${key}`] as const),
	),
);
/** The key of a `claim:` entry, by hash; of either state's entry. */
const CLAIMS = new Map(KEYS.map((key) => [hashOf(`claim:${key}`), key]));
const STATES = new Map(
	KEYS.flatMap((key) => ['claim', 'open'].map((state) => [hashOf(`${state}:${key}`), key])),
);
/** An item's error for a key whose outcome is unknown (idempotencyKeys.ts, unknownKeyError). */
const UNKNOWN_KEY = /outcome of the create with Idempotency Key/;
