// The exactly-once code users run, in a seeded simulation of an n8n cluster (issue 42): 3–8 processes, each with
// its own virtual clock (up to 5 s apart: the code must never compare them) and its own KeysProcess (its stores,
// its keys in flight, its lock's turns), sharing n8n's processed-data store as a model that behaves query by query
// as n8n's DeduplicationHelper does (test/support/store-model.ts, pinned to n8n by test/e2e-scale/store-model.test.ts).
// Each node run goes through the real ItemStep (actions/itemStep.ts), RunClaims and IdempotencyKeys, with the
// real RunRecord and run report; only the create is simulated (the service, run.ts). Checks per seed: see
// `Checks` below. test/simulation/cli.ts (`npm run sim`) and test/unit/exactly-once-simulation.test.ts run it.
import type { IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { type KeysProcess } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { RowLock, type Clock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { UNKNOWN_OUTCOME_WAY_FORWARD } from '../../nodes/InvoiceService/transport/errors';
import { hashOf, StoreModel, type ModelHelpers, type Query } from '../support/store-model';
import { generator, Schedule } from './schedule';
import { runNode, type NodeSpec, type RunResult, type Service } from './run';

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

export interface SeedResult {
	seed: number;
	violations: string[];
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
}

export async function simulateCluster(
	seed: number,
	settings: SimSettings,
	{ trace: tracing = false } = {},
): Promise<SeedResult> {
	const random = generator(seed);
	const schedule = new Schedule();
	const violations: string[] = [];
	const seen = new Set<string>();
	const trace: string[] = [];
	/** A trace line, built only when tracing (`line` is called then). */
	const log = (line: () => string) => {
		if (tracing) trace.push(`${(schedule.now / 1000).toFixed(3)} ${line()}`);
	};
	const kinds = new Set<string>();
	const fail = (what: string) => {
		log(() => `VIOLATION ${what}`);
		// The first of each kind (the same violation again says nothing new).
		const kind = what.replace(/p\d+|"[^"]*"/g, '?');
		if (kinds.has(kind) || kinds.size >= 20) return;
		kinds.add(kind);
		violations.push(`${(schedule.now / 1000).toFixed(3)} s: ${what}`);
	};

	// The seed's draws.
	const { min, max } = settings.processes;
	const processCount = min + Math.floor(random() * (max - min + 1));
	const pauseP = random() * settings.pauseP;
	const starveP = random() * settings.starveP;
	const failBefore = random() < 0.5 ? random() * 0.01 : 0;
	const failAfter = random() < 0.5 ? random() * 0.01 : 0;
	const kill: { process: number; atCreate?: number; atQuery?: number } | undefined =
		random() < 0.35
			? {
					process: Math.floor(random() * processCount),
					// Half the kills come during a create (its first or second), half at a query.
					...(random() < 0.5
						? { atCreate: 1 + Math.floor(random() * 2) }
						: { atQuery: 1 + Math.floor(random() * 200) }),
				}
			: undefined;
	// A History Size small enough to trim and evict, or n8n's default.
	const historySize = random() < 0.5 ? 6 + Math.floor(random() * 20) : 10_000;
	const keysPerNode = 3 + Math.floor(random() * 5);

	const processes: SimProcess[] = [];
	const byName = new Map<string, SimProcess>();
	/** Who is inside a hold of each workflow's lock (between taking it and giving it back). */
	const holders = new Map<string, Set<SimProcess>>();
	/** Node-row checks that trim (their removals are History Size's evictions), by caller and row. */
	const trimming = new Map<string, number>();
	/** Entries History Size evicted: a key whose entries went that way is forgotten, as documented. */
	const evicted = new Set<string>();
	const rowBefore = new Map<Query, string[]>();

	/** Off for the last check, a fresh process's claims. */
	let faultsOn = true;
	const pause = (process: SimProcess, what: string): number => {
		if (!faultsOn || process.random() >= pauseP) return 0;
		seen.add(`paused ${what}`);
		return process.random() * settings.maxPauseMs;
	};
	const alive = (process: SimProcess) => () => !process.dead;
	/** A pause drawn at an await (no event when there is none: the schedule's events are its cost). */
	const paused = async (process: SimProcess, what: string) => {
		const ms = pause(process, what);
		if (ms > 0) await schedule.sleep(ms, alive(process));
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

	const model = new StoreModel({
		beforeQuery: async (query: Query) => {
			const process = byName.get(query.caller)!;
			process.queries++;
			if (kill && processes[kill.process] === process && process.queries === kill.atQuery)
				die(process, 'killed at a query');
			if (process.dead) await new Promise<never>(() => undefined);
			if (faultsOn && process.random() < starveP) starve(process);
			await paused(process, 'before a query');
			if (!(await connection(process))) {
				if (process.dead) await new Promise<never>(() => undefined);
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
				seen.add('a query failed before its commit');
				log(
					() =>
						`${process.name} ${query.helper} ${query.step} "${query.row}": failed before its commit`,
				);
				throw Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' });
			}
		},
		onRun: (query: Query) => {
			if (query.step === 'select') return;
			const data = model.rows.get(query.row)?.data;
			// What a write removes is read off the row before it: a trim's removals are evictions.
			const trims = (trimming.get(`${query.caller} ${query.row}`) ?? 0) > 0;
			if (Array.isArray(data) && (trims || tracing)) rowBefore.set(query, [...data]);
			log(
				() =>
					`${query.caller} ${query.helper} ${query.step} "${query.row}" (${Array.isArray(data) ? data.length : 'absent'})`,
			);
			if (!query.row.includes(' n:')) return;
			const workflow = query.row.split(' ')[0];
			const writer = byName.get(query.caller)!;
			const inside = holders.get(workflow) ?? new Set();
			if (!inside.has(writer)) fail(`${writer.name} wrote ${query.row} outside a hold of its lock`);
			const others = [...inside].filter((p) => p !== writer && !p.dead);
			if (others.length > 0)
				fail(
					`${writer.name} wrote ${query.row} while ${others.map((p) => p.name).join(', ')} held the lock`,
				);
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
			if (before && query.step === 'update' && trimming.get(`${query.caller} ${query.row}`)) {
				const after = new Set(model.rows.get(query.row)?.data as string[]);
				for (const entry of before) {
					if (!after.has(entry)) {
						evicted.add(`${query.row} ${entry}`);
						seen.add('History Size evicted an entry');
					}
				}
			}
			const process = byName.get(query.caller)!;
			await paused(process, 'after a query');
			if (faultsOn && query.step !== 'select' && process.random() < failAfter) {
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
			helpers = {
				...raw,
				checkProcessedAndRecord: async (items, scope, options) => {
					const trims = scope === 'node' && options.maxEntries !== undefined;
					const id = `${process.name} ${row}`;
					if (trims) trimming.set(id, (trimming.get(id) ?? 0) + 1);
					try {
						return await raw.checkProcessedAndRecord(items, scope, options);
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
			random: own,
			dead: false,
			queries: 0,
			free: POOL_SIZE,
			waiting: [],
			running: new Set(),
			helpers: new Map(),
		} as unknown as SimProcess;
		process.clock = {
			now: () => schedule.now + offset,
			// A pause at any await: the process's waits end late too.
			sleep: async (ms) => await schedule.sleep(ms + pause(process, 'in a wait'), alive(process)),
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
			return await super.hold(prepare, async (stillHeld) => {
				let inside = holders.get(this.workflow);
				if (!inside) holders.set(this.workflow, (inside = new Set()));
				inside.add(this.process);
				try {
					return await work(stillHeld);
				} finally {
					inside.delete(this.process);
				}
			});
		}
	}

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
	const rowOfId = (id: string) => id.slice(0, id.lastIndexOf('/'));
	const keyOfId = (id: string) => id.slice(id.lastIndexOf('/') + 1);
	const creates = new Map<SimProcess, number>();

	const service: Service = {
		create: async (processName, id) => {
			const process = byName.get(processName)!;
			const event = eventOf(id);
			const row = rowOfId(id);
			if (!isEvicted(row, keyOfId(id))) {
				if (event.running > 0)
					fail(`"${id}" sent by ${process.name} while another send of it runs`);
				else if (event.created) fail(`"${id}" sent by ${process.name} after it was created`);
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
			const killedNow = kill && processes[kill.process] === process && kill.atCreate === count;
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

	/** Runs still to finish (the simulation ends when none is left, or at the limit). */
	let pendingRuns = 0;
	let resends = 0;

	/** What the run's items were told: their codes, their unknowns, their excuses. */
	const heard = (node: NodeSpec, keys: string[], result: RunResult) => {
		const row = rowOfNode(node);
		for (const { itemIndex, text, storeFailure } of result.errors) {
			const id = `${row}/${keys[itemIndex]}`;
			if (storeFailure) excused.add(id);
			for (const code of text.match(CODES) ?? []) {
				let codes = told.get(id);
				if (!codes) told.set(id, (codes = new Set()));
				codes.add(code);
			}
			if (UNKNOWN_KEY.test(text)) {
				seen.add('an item failed as unknown');
				if ((text.match(CODES) ?? []).length === 0) unknownWithoutCode.add(id);
			}
		}
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
				service,
				timings: { maxRetryWaitMs: MAX_RETRY_WAIT_MS, timeoutMs: TIMEOUT_MS },
				concurrency: process.random() < 0.3 ? 2 : 1,
			}).then((result) => {
				// A run its process's kill ended is no longer counted (die), and no one hears of it.
				if (process.dead) return;
				process.running.delete(ids);
				pendingRuns--;
				heard(node, keys, result);
				log(() => `${process.name} ran ${rowOfNode(node)} [${keys.join(' ')}]`);
				for (const { itemIndex, text } of result.errors) log(() => `  item ${itemIndex}: ${text}`);
				followUp(node, keys, result, executeData, process);
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
	const followUp = (
		node: NodeSpec,
		keys: string[],
		result: RunResult,
		executeData: Record<string, unknown>,
		ranOn: SimProcess,
	) => {
		for (const { itemIndex, text } of result.errors) {
			const key = keys[itemIndex];
			const id = `${rowOfNode(node)}/${key}`;
			const codes = [...(text.match(CODES) ?? []), ...(told.get(id) ?? [])];
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
				if (retry) startRun(schedule.now, node, keys, [code], liveProcess, executeData);
				else startRun(schedule.now, node, [key], [code], liveProcess);
				if (random() < 0.3) {
					seen.add('a stale code entered again');
					startRun(schedule.now + random() * 120_000, node, [key], [code], liveProcess);
				}
			});
		}
		if (settings.redeliver && result.errors.length > 0 && random() < 0.3) {
			seen.add('a failed run delivered again');
			startRun(schedule.now + random() * 30_000, node, keys, [], () =>
				random() < 0.5 ? ranOn : liveProcess(),
			);
		}
	};

	for (let index = 0; index < processCount; index++) {
		const process = makeProcess(`p${index}`, Math.round((random() * 2 - 1) * 5000));
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
			if (settings.redeliver && random() < 0.4) {
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
		if (isEvicted(row, key)) continue;
		const data = model.rows.get(row)?.data;
		const held = new Set(Array.isArray(data) ? data : []);
		const claimed = held.has(hashOf(`claim:${key}`));
		const open = held.has(hashOf(`open:${key}`));
		if (event.created && !claimed && !open)
			fail(`"${id}" was created, and is erased from the store`);
		if (open && !claimed) {
			const codes = [...(told.get(id) ?? [])];
			if (!codes.some((code) => held.has(hashOf(`code:${code} ${key}`)))) {
				if (diedWith.has(id)) seen.add('a kill left an unknown key with a code no one was told');
				else fail(`"${id}" is unknown, and no one was told a resend code it takes`);
			}
		}
	}
	for (const id of unknownWithoutCode) {
		if (
			(events.get(id)?.sends ?? 0) === 0 &&
			!excused.has(id) &&
			!isEvicted(rowOfId(id), keyOfId(id))
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
		schedule.now + KEYS_TIMING.lock.maxWaitMs + 10_000,
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
/** The states' entries of the simulation's keys, by hash (for the trace). */
const NAMES = new Map(
	Array.from({ length: 10 }, (_, n) => `event-${n}`).flatMap((key) =>
		['claim', 'open'].map((state) => [hashOf(`${state}:${key}`), `${state}:${key}`] as const),
	),
);
/** An item's error for a key whose outcome is unknown (idempotencyKeys.ts, unknownKeyError). */
const UNKNOWN_KEY = /outcome of the create with Idempotency Key/;
/** A resend code as errors and warnings print it (resendCodes.ts). */
const CODES = /\b[23456789ABCDEFGHJKMNPQRSTVWXYZ]{8}\b/g;
