// S1: one `n8n start` (SQLite), the sandbox limiting creates to 20/s: ours, HTTP Request and the no-op floor,
// each `runs` times, interleaved, and ours with the limit off (what n8n itself takes); then ours at other sizes
// (how CPU per event grows). S1 capped: ours again, n8n running at most 10 executions at once.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { measureStorm, type Delivery, type StormMeasured, type StormSpec } from './measure';
import {
	LOADGEN_CONCURRENCY,
	GROUPS,
	untilPaceForgotten,
	S1_EVENTS,
	S1_WITHIN_MS,
	STORM_RATE,
	type StormPlan,
} from './plan';
import { stormServer, type StormServer } from './server';
import type { StormKind } from './workflows';

const LABELS: Record<StormKind, string> = {
	ours: 'Invoice Service (defaults)',
	http: 'HTTP Request 4.2, Retry On Fail 5 × 1 s',
	noop: 'floor: Webhook → respond',
	keyed: 'Invoice Service, Idempotency Key on both nodes',
};

/** The kinds that send through ours, i.e. through the pace this n8n shares. */
const paced = (kind: StormKind) => kind === 'ours' || kind === 'keyed';

/** n8n's cap on production executions run at once, for the capped variant (n8n's default: no cap). */
export const PRODUCTION_LIMIT = 10;

/**
 * One `n8n start` with the given workflows and environment, the sandbox limiting creates, and `runs` of
 * storms against it; the runs through ours (keyed too) wait untilPaceForgotten, so the shared pace starts fresh.
 */
export async function withServer(
	tarball: string,
	kinds: StormKind[],
	env: NodeJS.ProcessEnv,
	body: (
		run: (
			group: string,
			kind: StormKind,
			events: number,
			repeat: number,
			deliveries?: Delivery[],
		) => Promise<void>,
		sandbox: Sandbox,
		server: StormServer,
	) => Promise<void>,
): Promise<StormMeasured[]> {
	const sandbox = await startSandbox({ rateLimit: STORM_RATE, seed: 17 });
	const server = await stormServer(sandbox, tarball, kinds, env);
	const measured: StormMeasured[] = [];
	let oursEnded = 0;
	const run = async (
		group: string,
		kind: StormKind,
		events: number,
		repeat: number,
		deliveries?: Delivery[],
	) => {
		if (paced(kind)) await untilPaceForgotten(oursEnded);
		const spec: StormSpec = {
			group,
			kind,
			label: LABELS[kind],
			url: server.url(kind),
			events,
			withinMs: Math.round((events / S1_EVENTS) * S1_WITHIN_MS),
			concurrency: LOADGEN_CONCURRENCY,
			repeat,
			processes: { n8n: server.pid },
			deliveries,
		};
		measured.push(await measureStorm(sandbox, spec));
		if (paced(kind)) oursEnded = Date.now();
	};
	try {
		await body(run, sandbox, server);
	} finally {
		await server.stop();
		await sandbox.close();
	}
	return measured;
}

export function runS1(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	return withServer(tarball, ['ours', 'http', 'noop'], {}, async (run, sandbox) => {
		// Interleaved, so that a change of load on the machine falls on every variant alike.
		for (let repeat = 1; repeat <= plan.runs; repeat++) {
			for (const kind of ['ours', 'http', 'noop'] as const)
				await run(GROUPS.s1, kind, S1_EVENTS, repeat);
			// The same storm with the limit off: how long n8n itself takes, i.e. whether the limit or n8n sets the time.
			sandbox.configure({ rateLimit: null });
			await run(GROUPS.s1NoLimit, 'ours', S1_EVENTS, repeat);
			sandbox.configure({ rateLimit: STORM_RATE });
		}
		for (const size of plan.sizes) await run(GROUPS.s1Sizes, 'ours', size, 1);
	});
}

/** S1 for ours in an n8n that runs at most PRODUCTION_LIMIT production executions at once (the rest wait in n8n). */
export function runS1Capped(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	const env = { N8N_CONCURRENCY_PRODUCTION_LIMIT: String(PRODUCTION_LIMIT) };
	return withServer(tarball, ['ours'], env, async (run) => {
		for (let repeat = 1; repeat <= plan.runs; repeat++)
			await run(GROUPS.s1Capped, 'ours', S1_EVENTS, repeat);
	});
}
