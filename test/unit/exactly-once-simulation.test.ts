// The cluster simulation (test/simulation/cluster.ts: the real IdempotencyKeys, RunClaims and ItemStep in 2–16
// simulated processes on the model of n8n's store) over 2,000 swarm seeds (each draws its own settings: swarm.ts),
// and the kept seeds. A failure prints each seed's defects and its replay command (`npm run sim -- --seed S --swarm
// --trace`); SIM_SEEDS=<n> runs n swarm seeds instead. A violation beyond a named bound (bounds.ts) is counted, not
// failed: the guarantee rests on those bounds.
import { describeViolation, parseArgs, replayOf, summaryOf } from '../simulation/cli';
import { simulateCluster, WIDEST, type SimSettings, type Violation } from '../simulation/cluster';
import { BOUND_TABLE } from '../simulation/bounds';
import { describeDraw, drawSwarm } from '../simulation/swarm';

/** Each from the widest, narrowed where it says. */
const MANY: SimSettings = {
	...WIDEST,
	processes: { min: 6, max: 8 },
	pauseP: 0.05,
	maxPauseMs: 3_000,
	starveP: 0.02,
};
/** The settings issue 42's schedules were found at: many processes, pauses up to 3 s at up to 15 % of awaits. */
const CROWDED: SimSettings = { ...MANY, pauseP: 0.15 };
/** Issue 51's first replay: CROWDED with n8n's pool starved more often. */
const ISSUE_51: SimSettings = { ...CROWDED, starveP: 0.05 };

/** Swarm seeds 1–2,000, in parts (each its own test, so that a part's time stays within its limit). */
const SWARM_SEEDS = Number(process.env.SIM_SEEDS ?? 2_000);
const PARTS = 4;

/**
 * Seeds kept as named regressions: each reached one of issue 42's defects with its fix taken out again (in a
 * working copy: the flight's watch counting from the first flight seen, runClaims.ts's warning of a claim ahead given
 * up on dropped; the give-backs found in 20,000 seeds at the widest settings before outcomes were tied to their
 * flight's time, keyStore.ts's lateAfter), with the violation named; and 1158, issue 51's replay of two holders. Each
 * must have no defect (a violation beyond a named bound is not one). Since issue 51 the simulation counts as told only
 * what n8n keeps, checks History Size and counts false blocks: several kept seeds show those defects until the node
 * is fixed (test/simulation/README.md).
 */
const KEPT: Array<{ seed: number; settings: SimSettings; defect: string }> = [
	{
		seed: 268,
		settings: CROWDED,
		defect: 'defect 1: a waiter gave up on the wrong flight, a second create',
	},
	{
		seed: 30,
		settings: CROWDED,
		defect: 'defect 3: a claim ahead given up on, its resend code told no one',
	},
	{
		seed: 31,
		settings: CROWDED,
		defect: 'defect 3: a claim ahead given up on, its resend code told no one',
	},
	...[8435, 9564].map((seed) => ({
		seed,
		settings: WIDEST,
		defect: 'a give-back landed after a give-up, on the key created meanwhile: a second create',
	})),
	{
		seed: 9735,
		settings: WIDEST,
		defect:
			'a key an item gave up on found unknown by a later item of the run, told to look for the code elsewhere',
	},
	{
		seed: 11066,
		settings: WIDEST,
		defect:
			'a late unknown mark gave its key a second resend code, which took it over again: a second create',
	},
	{
		seed: 7386,
		settings: WIDEST,
		defect:
			'a failed check left a resend code entry in the row, which a later claim listing that code took for one issued: a second create',
	},
	{
		seed: 3601,
		settings: WIDEST,
		defect:
			"a waiter's give-up code, left over from an earlier look's failed removal, taken out by a later removal: an unknown key with no code told",
	},
	{
		seed: 1251,
		settings: WIDEST,
		defect:
			"a failed check's code entries taken out with its count unknown, though nothing was written: an unknown key's code lost",
	},
	{
		seed: 12509,
		settings: WIDEST,
		defect:
			"one process's left-over code entries taken out by another's removal (module-level state): an unknown key's code lost",
	},
	{
		seed: 14847,
		settings: WIDEST,
		defect:
			"a claim ahead that failed, given back while its run stalled: its item later told unknown without the failure's word why",
	},
	{
		seed: 28460,
		settings: WIDEST,
		defect:
			"a taker's own-lock check counted the row after finding its identity: a new lock of the same count taken for its own, two holders",
	},
	...[26669, 34089].map((seed) => ({
		seed,
		settings: WIDEST,
		defect:
			"an unknown mark's removal written though it failed, then counted late at its next try: its code, told, taken out",
	})),
	{
		seed: 3292,
		settings: WIDEST,
		defect:
			"a resend code's entry a removal left in (sent past the hold's time) took its key over again once unknown anew: a second create",
	},
	...[11980, 17791].map((seed) => ({
		seed,
		settings: WIDEST,
		defect:
			'a claim ahead, never reached, whose check failed after writing left its key in flight untold: a later delivery told unknown with no word why',
	})),
	{
		seed: 1158,
		settings: ISSUE_51,
		defect:
			"issue 51's defect 1: a non-holder's clean-up DELETE after a failed INSERT removed the next holder's lock: two holders",
	},
	...[777, 11038, 13466].map((seed) => ({
		seed,
		settings: WIDEST,
		defect: 'a give-back landed after a give-up, on a later state: a never-sent key called unknown',
	})),
];

const BOUND_NAMES = new Set(BOUND_TABLE.map((bound) => bound.name));

/**
 * Swarm seeds kept, each with the bound its violation was beyond when kept (none: no violation at all). Each once counted as a
 * defect: 6766 and 9169, a false block whose live waiters were all held up, because a waiter killed long before still
 * counted as one waiting unhindered (cluster.ts's falseBlock); 7245, a process stalled 136 s inside its hold whose
 * write landed under the next holder, its own lateness not weighed (cluster.ts's write check); 63198 and 63717, a
 * stop report telling an item's old resend code, used by the run's claim, instead of the new one it was given when
 * the run gave up waiting for its key (RunRecord.recode).
 */
const KEPT_SWARM: Array<{ seed: number; defect: string; beyond?: string }> = [
	...[6766, 9169].map((seed) => ({
		seed,
		defect: 'a dead waiter counted as waiting unhindered: a held-up false block called a defect',
		beyond: 'held-up',
	})),
	{
		seed: 7245,
		defect:
			"a write sent inside a hold and landing 136 s later: the writer's own lateness not weighed",
		beyond: 'write-late',
	},
	...[63198, 63717].map((seed) => ({
		seed,
		defect: "a stop report telling an item's used resend code, not the one its key was given",
	})),
	{
		seed: 68008,
		defect:
			"a failed INSERT's clean-up deleting another process's lock of the same identity (two of 100) and count",
	},
	{
		seed: 32336,
		defect:
			'a claim that found its key unknown counted as its last claim: a key sent long before called young',
	},
	{
		seed: 87315,
		defect:
			"a mark landing late over the next lock with an old marker: a waiter's lease ran on and took the live hold over",
	},
];

describe('the Idempotency Keys in a simulated cluster (the code users run, seeded)', () => {
	const situations = new Map<string, number>();
	const beyond: Violation[] = [];
	it.each(Array.from({ length: PARTS }, (_, part) => part))(
		'swarm seeds, part %i of 0–3: no defect',
		async (part) => {
			const failures: string[] = [];
			const size = Math.ceil(SWARM_SEEDS / PARTS);
			for (let seed = part * size + 1; seed <= Math.min(SWARM_SEEDS, (part + 1) * size); seed++) {
				const draw = drawSwarm(seed);
				const result = await simulateCluster(seed, WIDEST, { swarm: draw });
				for (const situation of result.seen)
					situations.set(situation, (situations.get(situation) ?? 0) + 1);
				beyond.push(...result.violations.filter((violation) => violation.beyond));
				const defects = result.violations.filter((violation) => !violation.beyond);
				if (defects.length > 0)
					failures.push(
						`seed ${seed} (${describeDraw(draw)}): ${defects.map(describeViolation).join('; ')}\n  replay: ${replayOf(seed)}`,
					);
			}
			expect(failures).toEqual([]);
		},
		300_000,
	);

	it('the swarm seeds met every situation (a simulation that never paused, killed or resent proves nothing)', () => {
		if (SWARM_SEEDS < 2_000) return;
		for (const situation of [
			'paused before a query',
			'paused after a query',
			'paused in a wait',
			'one process stalled alone',
			'pct: a priority change point',
			'killed at a query',
			'killed during a create',
			'killed holding the lock',
			'a query timed out waiting for a connection',
			'an unknown outcome',
			'a user entered a resend code',
			'a run listed codes left in the option',
			'a run under continueOnFail',
			"a run's failed items not all in what n8n keeps",
			'a delivery went to Already Created',
			// Not 'History Size evicted an entry': since a613a44 a node's row holds 2 × History Size + 1,700 entries, which
			// the simulation's 2–30 keys a node never fill. Where History Size evicts, its young keys are checked.
		])
			expect([situation, situations.get(situation) ?? 0]).not.toEqual([situation, 0]);
		// Printed for the record: how many were beyond a named bound.
		console.log(summaryOf(SWARM_SEEDS, beyond));
	});

	it('a swarm seed draws its settings as a pure function of the seed, within the ranges', () => {
		for (const seed of [1, 2, 777, 99_999]) {
			const draw = drawSwarm(seed);
			expect(drawSwarm(seed)).toEqual(draw);
			expect(draw.processes).toBeGreaterThanOrEqual(2);
			expect(draw.processes).toBeLessThanOrEqual(16);
			expect(draw.pauseP).toBeLessThanOrEqual(0.3);
			expect(draw.maxPauseMs).toBeGreaterThanOrEqual(100);
			expect(draw.maxPauseMs).toBeLessThanOrEqual(120_000);
			expect(draw.starveP).toBeLessThanOrEqual(0.5);
			expect(describeDraw(draw)).not.toContain('\n');
		}
		const draws = Array.from({ length: 400 }, (_, n) => drawSwarm(n + 1));
		const stalls = draws.filter((draw) => draw.pauses === 'one stalls').length;
		// One process stalling alone drawn as often as everyone pausing.
		expect(stalls).toBeGreaterThan(150);
		expect(stalls).toBeLessThan(250);
		expect(summaryOf(3, [{ what: 'a' }, { what: 'b', beyond: 'write-late' }])).toBe(
			'3 seeds, 2 violations (1 defects, 1 beyond a named bound)',
		);
	});

	it('npm run sim refuses a blank or malformed flag value, naming the flag', () => {
		for (const [argv, flag] of [
			[['--seeds'], '--seeds'],
			[['--seeds', ' '], '--seeds'],
			[['--seeds', '2x'], '--seeds'],
			[['--seed', '1.5'], '--seed'],
			[['--processes', '8-3'], '--processes'],
			[['--processes', '3'], '--processes'],
			[['--pause-p', '1.5'], '--pause-p'],
			[['--max-pause-ms', '-5'], '--max-pause-ms'],
			[['--starve-p', '--redeliver'], '--starve-p'],
			[['--from', '0', '--seeds', '2'], '--from'],
			[['--from', '3', '--seed', '2'], '--from'],
		] as const)
			expect(() => parseArgs([...argv])).toThrow(flag);
		expect(parseArgs(['--seed', '7', '--trace', '--redeliver'])).toMatchObject({
			seeds: [7],
			trace: true,
			settings: { redeliver: true },
		});
		expect(parseArgs(['--seeds', '3', '--from', '10001']).seeds).toEqual([10_001, 10_002, 10_003]);
		expect(parseArgs(['--swarm', '--seeds', '2', '--from', '5'])).toMatchObject({
			swarm: true,
			seeds: [5, 6],
		});
		expect(() => parseArgs(['--swarm', '--pause-p', '0.1'])).toThrow('--pause-p');
	});

	it.each(KEPT.map((kept) => [kept.seed, kept.defect, kept.settings] as const))(
		'kept seed %i (%s): no defect',
		async (seed, _, settings) => {
			// A defect fails it; a violation beyond a named bound (bounds.ts) is not one.
			const { violations } = await simulateCluster(seed, settings);
			const defects = violations.filter((violation) => !violation.beyond);
			expect(defects.map(describeViolation)).toEqual([]);
		},
	);

	it.each(KEPT_SWARM.map((kept) => [kept.seed, kept.defect, kept.beyond] as const))(
		'kept swarm seed %i (%s): no defect',
		async (seed, _, beyond) => {
			const { violations } = await simulateCluster(seed, WIDEST, { swarm: drawSwarm(seed) });
			expect(violations.filter((violation) => !violation.beyond).map(describeViolation)).toEqual(
				[],
			);
			// Beyond which bound, if any, was the seed's schedule when kept; the lock's draws since (a third identity
			// entry) give it another: only "no defect" is asked.
			expect(beyond === undefined || BOUND_NAMES.has(beyond)).toBe(true);
		},
	);
});
