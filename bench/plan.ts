// What the bench runs: the scenarios P1, P2, P4, their sizes, and the command-line switches.
import type { Sandbox, SandboxOptions } from '../sandbox/server';
import type { Scenario } from './workflows';

export const RATE = { perSecond: 50, burst: 50 };
export const P1_LATENCY = { latencyMs: 40, jitterMs: 30 };
/** 10-150 ms uniform: mean 80 ms. */
export const P2_LATENCY = { latencyMs: 80, jitterMs: 70 };
/** The concurrency the P2 bound is stated for. */
export const P2_CONCURRENCY = 10;

/** One sandbox per scenario group, each with its own latency and limits. */
export const SANDBOXES: Record<'P1' | 'P2' | 'P4', Partial<SandboxOptions>> = {
	P1: { rateLimit: RATE, ...P1_LATENCY, seed: 1 },
	P2: { ...P2_LATENCY, seed: 2 },
	P4: { seed: 3 },
};

export interface Plan {
	/** --quick or BENCH_QUICK=1: small sizes, one run each; results go to a temp folder. */
	quick: boolean;
	/** --only=id,id or BENCH_ONLY: run only these scenario ids; no report. */
	only: string[];
	p1Items: number;
	p2Items: number;
	/** Loop Over Items sends one at a time (about 11 items/s): fewer items give the same items/s. */
	loopItems: number;
	/** P2 at concurrency 10, ours and the floor: this many runs in a row (alternating). */
	p2Repeats: number;
	p4Sizes: number[];
}

export function readPlan(argv: string[], env: NodeJS.ProcessEnv): Plan {
	const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
	const onlyArg = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
	const only = (onlyArg ?? env.BENCH_ONLY ?? '').split(',').filter(Boolean);
	return quick
		? { quick, only, p1Items: 200, p2Items: 200, loopItems: 50, p2Repeats: 1, p4Sizes: [200, 1000] }
		: {
				quick,
				only,
				p1Items: 2000,
				p2Items: 2000,
				loopItems: 500,
				p2Repeats: 3,
				p4Sizes: [1000, 10_000, 50_000],
			};
}

/** A run of a scenario in the order the bench runs them; `repeat` counts runs of the same scenario. */
export interface PlannedRun {
	scenario: Scenario;
	repeat: number;
}

const OURS = 'Invoice Service';
const HTTP = 'HTTP Request 4.2';
const BASELINE = 'baseline: only make the items';

export function planRuns(plan: Plan, sandboxes: Record<'P1' | 'P2' | 'P4', Sandbox>): PlannedRun[] {
	const runs: PlannedRun[] = [];
	const scenario = (
		group: Scenario['group'],
		id: string,
		kind: Scenario['kind'],
		label: string,
		items: number,
		concurrency?: number,
	): Scenario => ({ id, group, kind, label, items, concurrency, sandbox: sandboxes[group] });
	const once = (s: Scenario) => runs.push({ scenario: s, repeat: 1 });
	const c10 = P2_CONCURRENCY;
	const [n1, n2] = [plan.p1Items, plan.p2Items];

	once(scenario('P1', 'p1ours', 'ours', `${OURS}, defaults (concurrency 5)`, n1));
	once(scenario('P1', 'p1http', 'http', `${HTTP}, defaults`, n1));
	once(scenario('P1', 'p1batch', 'http-batching', `${HTTP}, batching 10 items / 200 ms`, n1));

	once(scenario('P2', 'p2base', 'baseline', BASELINE, n2));
	const ours10 = scenario('P2', 'p2ours10', 'ours', `${OURS}, concurrency ${c10}`, n2, c10);
	const floor10 = scenario('P2', 'p2floor10', 'floor', `floor, concurrency ${c10}`, n2, c10);
	// Alternating, so that a change of load on the machine falls on both alike.
	for (let repeat = 1; repeat <= plan.p2Repeats; repeat++) {
		runs.push({ scenario: ours10, repeat }, { scenario: floor10, repeat });
	}
	once(
		scenario('P2', 'p2loop', 'http-loop', `Loop Over Items (batch 1) + ${HTTP}`, plan.loopItems),
	);
	once(scenario('P2', 'p2ours50', 'ours', `${OURS}, concurrency 50`, n2, 50));
	once(scenario('P2', 'p2http', 'http', `${HTTP}, defaults (all at once)`, n2));

	for (const size of plan.p4Sizes) {
		once(scenario('P4', `p4base${size}`, 'baseline', BASELINE, size));
		once(scenario('P4', `p4ours${size}`, 'ours', `${OURS}, defaults (concurrency 5)`, size));
		once(scenario('P4', `p4floor${size}`, 'floor', 'floor, concurrency 5', size));
		once(scenario('P4', `p4http${size}`, 'http', `${HTTP}, defaults`, size));
	}
	// The Idempotency Key's cost (issue 27), beside p1ours and p4ours<size>: run only when named (--only).
	const keyed = [
		scenario('P1', 'p1keyed', 'ours-keyed', `${OURS}, Idempotency Key, defaults`, n1),
		...plan.p4Sizes.map((size) =>
			scenario('P4', `p4keyed${size}`, 'ours-keyed', `${OURS}, Idempotency Key, defaults`, size),
		),
	];
	for (const run of keyed) if (plan.only.includes(run.id)) once(run);
	return runs;
}
