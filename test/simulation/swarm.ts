// `npm run sim -- --swarm`: every seed draws its own settings (swarm testing), so that no fix is checked against the
// same few settings only. The draws are a pure function of the seed (a generator of their own, apart from the
// cluster's), so `--seed S --swarm --trace` replays a seed exactly.
import { generator } from './schedule';

/** What one swarm seed runs with. */
export interface SwarmDraw {
	/** Processes: 2–16. */
	processes: number;
	/**
	 * How processes are held up: 'everyone' pauses at any await in every process (up to `pauseP` of them, each up to
	 * `maxPauseMs`); 'one stalls' has `stalls` (one process held up alone, long, while the others run) with light
	 * pauses besides. Drawn as often as each other.
	 */
	pauses: 'everyone' | 'one stalls';
	/** Probability of a pause at an await: 0–0.3 (everyone), 0–0.02 (one stalls). */
	pauseP: number;
	/** The longest pause: 0.1–120 s, log-uniform. */
	maxPauseMs: number;
	/** One process held up alone (its event loop stalled) from `atMs` for `forMs` (1–150 s, log-uniform). */
	stalls: Array<{ process: number; atMs: number; forMs: number }>;
	/** Probability, per query, that n8n's own work takes the process's pool connections: 0–0.5. */
	starveP: number;
	/** Events delivered again. */
	redeliver: boolean;
	/** History Size: 2–40 (trimmed) or n8n's default 10,000. */
	historySize: number;
	/** Distinct events per node: 2–30 (more than History Size: keys evicted as documented). */
	keysPerNode: number;
	/** How far each process's clock may be off: 0–10 minutes. */
	clockSkewMs: number;
	/** Processes killed: at a query (its number) or during a create (its number). */
	kills: Array<{ process: number; atQuery?: number; atCreate?: number }>;
	/** Probability that a user leaves a resend code in the option once entered (later runs carry it): 0 or 0.2–1. */
	codesLeftIn: number;
	/** Probability that a run is under continueOnFail (its error items are what the user is told): 0 or 0–0.5. */
	continueOnFailP: number;
	/**
	 * How queries are ordered: 'uniform' (only the pauses and the pool), or 'pct' (PCT-style: each process a priority,
	 * a query held `quantumMs` per rank below the top, and at `changePoints` (query numbers of the cluster) the process
	 * querying then drops to the lowest priority).
	 */
	scheduler: 'uniform' | 'pct';
	quantumMs: number;
	changePoints: number[];
	/** Each process's first priority (pct): a permutation of 0..processes-1, higher first. */
	priorities: number[];
}

/** A seed's draws (its own generator: the cluster's draws of the same seed are not moved). */
export function drawSwarm(seed: number): SwarmDraw {
	const random = generator((seed ^ 0x5a17_3c9d) >>> 0);
	const between = (min: number, max: number) => min + random() * (max - min);
	const whole = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
	const logBetween = (min: number, max: number) => Math.exp(between(Math.log(min), Math.log(max)));
	const processes = whole(2, 16);
	const pauses = random() < 0.5 ? 'everyone' : 'one stalls';
	const pauseP = pauses === 'everyone' ? between(0, 0.3) : between(0, 0.02);
	const maxPauseMs = Math.round(logBetween(100, 120_000));
	const stalls =
		pauses === 'one stalls'
			? Array.from({ length: whole(1, 3) }, () => ({
					process: whole(0, processes - 1),
					atMs: Math.round(between(0, 60_000)),
					forMs: Math.round(logBetween(1_000, 150_000)),
				}))
			: [];
	const starveP = random() < 0.25 ? 0 : between(0, 0.5);
	const redeliver = random() < 0.6;
	const historySize = random() < 0.6 ? whole(2, 40) : 10_000;
	const keysPerNode = whole(2, 30);
	const clockSkewMs = Math.round(random() < 0.5 ? between(0, 5_000) : between(0, 600_000));
	const kills = Array.from({ length: random() < 0.4 ? whole(1, 3) : 0 }, () => ({
		process: whole(0, processes - 1),
		...(random() < 0.5 ? { atCreate: whole(1, 3) } : { atQuery: whole(1, 300) }),
	}));
	const codesLeftIn = random() < 0.5 ? 0 : between(0.2, 1);
	const continueOnFailP = random() < 0.6 ? 0 : between(0, 0.5);
	const scheduler = random() < 0.5 ? 'uniform' : 'pct';
	const quantumMs = Math.round(logBetween(1, 300));
	const changePoints = Array.from({ length: whole(1, 4) }, () => whole(1, 2_000)).sort(
		(a, b) => a - b,
	);
	const priorities = Array.from({ length: processes }, (_, n) => n);
	for (let n = processes - 1; n > 0; n--) {
		const other = Math.floor(random() * (n + 1));
		[priorities[n], priorities[other]] = [priorities[other], priorities[n]];
	}
	return {
		processes,
		pauses,
		pauseP,
		maxPauseMs,
		stalls,
		starveP,
		redeliver,
		historySize,
		keysPerNode,
		clockSkewMs,
		kills,
		codesLeftIn,
		continueOnFailP,
		scheduler,
		quantumMs,
		changePoints,
		priorities,
	};
}

/** One short line of what a seed drew. */
export function describeDraw(draw: SwarmDraw): string {
	const s = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
	const p = (n: number) => n.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
	return [
		`${draw.processes}p`,
		draw.pauses === 'everyone'
			? `pauses p${p(draw.pauseP)}≤${s(draw.maxPauseMs)}`
			: `stalls ${draw.stalls.map((stall) => `p${stall.process}@${s(stall.atMs)}+${s(stall.forMs)}`).join(',')} (pauses p${p(draw.pauseP)}≤${s(draw.maxPauseMs)})`,
		`starve ${p(draw.starveP)}`,
		draw.redeliver ? 'redeliver' : 'once',
		`history ${draw.historySize}/${draw.keysPerNode} keys`,
		`skew ±${s(draw.clockSkewMs)}`,
		draw.kills.length > 0
			? `kills ${draw.kills.map((kill) => `p${kill.process}${kill.atCreate ? ` create#${kill.atCreate}` : ` query#${kill.atQuery}`}`).join(',')}`
			: 'no kill',
		draw.codesLeftIn > 0 ? `codes left in ${p(draw.codesLeftIn)}` : 'codes cleared',
		draw.continueOnFailP > 0 ? `continueOnFail ${p(draw.continueOnFailP)}` : 'stops',
		draw.scheduler === 'pct' ? `pct ${draw.quantumMs}ms@${draw.changePoints.join('/')}` : 'uniform',
	].join(' · ');
}
