// `npm run sim`: the cluster simulation (cluster.ts) over many seeds, or one replayed with its trace.
//   npm run sim -- --seeds N [--from S] [--processes MIN-MAX] [--pause-p P] [--max-pause-ms MS] [--starve-p P] [--redeliver]
//   npm run sim -- --seed S --trace
// The last line is `N seeds, V violations`; the exit code is 1 on any violation, 2 on a wrong flag.
import { simulateCluster, WIDEST, type SimSettings } from './cluster';

export interface SimArgs {
	seeds: number[];
	settings: SimSettings;
	trace: boolean;
}

/** The command line's flags; throws an Error naming the flag for a blank, malformed or unknown one. */
export function parseArgs(argv: string[]): SimArgs {
	const settings: SimSettings = { ...WIDEST, processes: { ...WIDEST.processes }, redeliver: false };
	let count: number | undefined;
	let seed: number | undefined;
	let from: number | undefined;
	let trace = false;
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
			default:
				throw new Error(`unknown flag "${flag}"`);
		}
	}
	if (seed !== undefined && count !== undefined)
		throw new Error('--seed and --seeds exclude each other');
	if (seed !== undefined && from !== undefined)
		throw new Error('--seed and --from exclude each other');
	const first = from ?? 1;
	const seeds =
		seed !== undefined ? [seed] : Array.from({ length: count ?? 100 }, (_, n) => n + first);
	return { seeds, settings, trace };
}

/** A seed's replay command. */
export function replayOf(
	seed: number,
	{ processes, pauseP, maxPauseMs, starveP, redeliver }: SimSettings,
): string {
	return `npm run sim -- --seed ${seed} --processes ${processes.min}-${processes.max} --pause-p ${pauseP} --max-pause-ms ${maxPauseMs} --starve-p ${starveP}${redeliver ? ' --redeliver' : ''} --trace`;
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
	let violations = 0;
	const situations = new Map<string, number>();
	for (const seed of args.seeds) {
		const result = await simulateCluster(seed, args.settings, { trace: args.trace });
		for (const situation of result.seen)
			situations.set(situation, (situations.get(situation) ?? 0) + 1);
		if (args.trace) console.log(result.trace.join('\n'));
		if (result.violations.length > 0) {
			violations += result.violations.length;
			console.log(
				`seed ${seed}: ${result.violations.join('; ')}\n  replay: ${replayOf(seed, args.settings)}`,
			);
		}
	}
	const seconds = ((performance.now() - started) / 1000).toFixed(1);
	// How many seeds met each situation: a simulation that never paused, killed or resent would prove nothing.
	for (const [situation, seeds] of [...situations].sort())
		console.log(`  ${seeds} seeds: ${situation}`);
	console.log(`settings ${JSON.stringify(args.settings)}, ${seconds} s`);
	console.log(`${args.seeds.length} seeds, ${violations} violations`);
	return violations > 0 ? 1 : 0;
}

if (require.main === module) {
	void main().then((code) => process.exit(code));
}
