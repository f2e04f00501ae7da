// `npm run sim`: the cluster simulation (cluster.ts) over many seeds, or one replayed with its trace.
//   npm run sim -- --seeds N [--from S] [--processes MIN-MAX] [--pause-p P] [--max-pause-ms MS] [--starve-p P] [--redeliver]
//   npm run sim -- --swarm --seeds N [--from S]      (each seed draws its own settings: swarm.ts)
//   npm run sim -- --seed S [--swarm] --trace
// The last line is `N seeds, V violations (D defects, B beyond a named bound)`; the exit code is 1 on any defect,
// 2 on a wrong flag. A violation is beyond a named bound only when a bound of bounds.ts was exceeded before it.
import { BOUND_TABLE } from './bounds';
import { simulateCluster, WIDEST, type SimSettings, type Violation } from './cluster';
import { describeDraw, drawSwarm } from './swarm';

export interface SimArgs {
	seeds: number[];
	settings: SimSettings;
	trace: boolean;
	/** Each seed draws its own settings (swarm.ts); `settings` are not used. */
	swarm: boolean;
}

/** The command line's flags; throws an Error naming the flag for a blank, malformed or unknown one. */
export function parseArgs(argv: string[]): SimArgs {
	const settings: SimSettings = { ...WIDEST, processes: { ...WIDEST.processes }, redeliver: false };
	let count: number | undefined;
	let seed: number | undefined;
	let from: number | undefined;
	let trace = false;
	let swarm = false;
	const setting: string[] = [];
	for (let index = 0; index < argv.length; index++) {
		const flag = argv[index];
		const value = () => {
			const given = argv[++index];
			if (given === undefined || given.trim() === '' || given.startsWith('--'))
				throw new Error(`${flag} needs a value`);
			return given.trim();
		};
		const number = (test: (n: number) => boolean, what: string) => {
			const given = value();
			const n = /^\d+(\.\d+)?$/.test(given) ? Number(given) : NaN;
			if (!test(n)) throw new Error(`${flag} must be ${what}, got "${given}"`);
			return n;
		};
		const whole = (n: number) => Number.isInteger(n);
		const probability = (n: number) => n >= 0 && n <= 1;
		if (['--processes', '--pause-p', '--max-pause-ms', '--starve-p', '--redeliver'].includes(flag))
			setting.push(flag);
		switch (flag) {
			case '--seeds':
				count = number((n) => whole(n) && n >= 1, 'a whole number of seeds, 1 or more');
				break;
			case '--from':
				from = number((n) => whole(n) && n >= 1, 'a whole number, 1 or more');
				break;
			case '--seed':
				seed = number(whole, 'a whole number');
				break;
			case '--processes': {
				const given = value();
				const match = /^(\d+)-(\d+)$/.exec(given);
				const [min, max] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
				if (!(min >= 1 && max >= min && max <= 50))
					throw new Error(`--processes must be MIN-MAX (1 ≤ MIN ≤ MAX ≤ 50), got "${given}"`);
				settings.processes = { min, max };
				break;
			}
			case '--pause-p':
				settings.pauseP = number(probability, 'a probability from 0 to 1');
				break;
			case '--max-pause-ms':
				settings.maxPauseMs = number(whole, 'a whole number of milliseconds');
				break;
			case '--starve-p':
				settings.starveP = number(probability, 'a probability from 0 to 1');
				break;
			case '--redeliver':
				settings.redeliver = true;
				break;
			case '--trace':
				trace = true;
				break;
			case '--swarm':
				swarm = true;
				break;
			default:
				throw new Error(`unknown flag "${flag}"`);
		}
	}
	if (seed !== undefined && count !== undefined)
		throw new Error('--seed and --seeds exclude each other');
	if (seed !== undefined && from !== undefined)
		throw new Error('--seed and --from exclude each other');
	if (swarm && setting.length > 0)
		throw new Error(`--swarm draws each seed's settings: ${setting[0]} excludes it`);
	const first = from ?? 1;
	const seeds =
		seed !== undefined ? [seed] : Array.from({ length: count ?? 100 }, (_, n) => n + first);
	return { seeds, settings, trace, swarm };
}

/** A seed's replay command (`settings` undefined: a swarm seed). */
export function replayOf(seed: number, settings?: SimSettings): string {
	if (!settings) return `npm run sim -- --seed ${seed} --swarm --trace`;
	const { processes, pauseP, maxPauseMs, starveP, redeliver } = settings;
	return `npm run sim -- --seed ${seed} --processes ${processes.min}-${processes.max} --pause-p ${pauseP} --max-pause-ms ${maxPauseMs} --starve-p ${starveP}${redeliver ? ' --redeliver' : ''} --trace`;
}

/** A violation as printed: its class, then what happened. */
export const describeViolation = ({ what, beyond }: Violation): string =>
	`${beyond ? `[beyond ${beyond}]` : '[defect]'} ${what}`;

/** The last line: `N seeds, V violations (D defects, B beyond a named bound)`. */
export function summaryOf(seeds: number, violations: Violation[]): string {
	const beyond = violations.filter((violation) => violation.beyond !== undefined).length;
	return `${seeds} seeds, ${violations.length} violations (${violations.length - beyond} defects, ${beyond} beyond a named bound)`;
}

async function main(): Promise<number> {
	let args: SimArgs;
	try {
		args = parseArgs(process.argv.slice(2));
	} catch (error) {
		console.error(`npm run sim: ${(error as Error).message}`);
		return 2;
	}
	const started = performance.now();
	const violations: Violation[] = [];
	const situations = new Map<string, number>();
	for (const seed of args.seeds) {
		const swarm = args.swarm ? drawSwarm(seed) : undefined;
		const result = await simulateCluster(seed, args.settings, { trace: args.trace, swarm });
		for (const situation of result.seen)
			situations.set(situation, (situations.get(situation) ?? 0) + 1);
		if (args.trace) console.log(result.trace.join('\n'));
		violations.push(...result.violations);
		const found = result.violations.length;
		if (swarm)
			console.log(
				`seed ${seed}: ${describeDraw(swarm)}${found > 0 ? ` → ${found} violation(s)` : ''}`,
			);
		if (found > 0) {
			console.log(
				`${swarm ? '  ' : `seed ${seed}: `}${result.violations.map(describeViolation).join('\n  ')}\n  replay: ${replayOf(seed, swarm ? undefined : args.settings)}`,
			);
		}
	}
	const seconds = ((performance.now() - started) / 1000).toFixed(1);
	// How many seeds met each situation: a simulation that never paused, killed or resent would prove nothing.
	for (const [situation, seeds] of [...situations].sort())
		console.log(`  ${seeds} seeds: ${situation}`);
	console.log(
		`bounds (bounds.ts): ${BOUND_TABLE.map((bound) => `${bound.name} ${bound.ms / 1000} s`).join(', ')}`,
	);
	console.log(
		`${args.swarm ? 'swarm' : `settings ${JSON.stringify(args.settings)}`}, ${seconds} s`,
	);
	console.log(summaryOf(args.seeds.length, violations));
	return violations.some((violation) => violation.beyond === undefined) ? 1 : 0;
}

if (require.main === module) {
	void main().then((code) => process.exit(code));
}
