// `npm run bench -- --storm` (issue 17): webhook storms, one execution per event, in real n8n servers.
// S1: one `n8n start` (SQLite), the sandbox limiting creates to 20/s: ours, HTTP Request and the no-op floor,
// each RUNS times, interleaved; then ours at other sizes (how CPU per event grows).
// S2: queue mode (main + workers, PostgreSQL, Redis), see s2.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { Sandbox } from '../../sandbox/server';
import { startSandbox } from '../../sandbox/server';
import {
	DEFAULT_N8N_VERSION,
	createN8nHome,
	ensureN8nInstalled,
	importAndPublish,
	packPackage,
	removeHome,
	startN8nServer,
	waitForWebhook,
	type N8nHome,
} from '../../tools/n8n';
import { log } from '../measure';
import { credentialsFor } from '../workflows';
import { measureStorm, type StormMeasured, type StormSpec } from './measure';
import { stormWorkflow, webhookPath, type StormKind } from './workflows';

export const STORM_VERSION = DEFAULT_N8N_VERSION;
/** The service's limit in S1 (and S2 "limited"): 20 creates per second, a bucket of one second's worth. */
export const STORM_RATE = { perSecond: 20, burst: 20 };
/** S1's storm: this many events posted within this long. */
export const S1_EVENTS = 300;
export const S1_WITHIN_MS = 5000;
/** Requests the load generator keeps in flight at most: above every storm's size, so the schedule holds. */
export const LOADGEN_CONCURRENCY = 1000;
/** The shared pace forgets a service after 30 s idle: ours' runs start at least this far apart, each fresh. */
const PACE_FORGOTTEN_MS = 31_000;

export interface StormPlan {
	quick: boolean;
	/** Runs of each S1 / S2 variant (the report gives medians). */
	runs: number;
	/** S1 sizes besides S1_EVENTS for ours (each posted at S1's arrival rate, 60 events/s). */
	sizes: number[];
}

export function stormPlan(quick: boolean): StormPlan {
	return quick ? { quick, runs: 1, sizes: [100] } : { quick, runs: 3, sizes: [100, 1000] };
}

/** A `n8n start` with the storm workflows of `kinds` published; `stop` ends it and removes its home. */
export async function stormServer(
	sandbox: Sandbox,
	tarball: string,
	kinds: StormKind[],
	env: NodeJS.ProcessEnv = {},
): Promise<{
	url: (kind: StormKind) => string;
	pid: number;
	home: N8nHome;
	stop(): Promise<void>;
}> {
	const home = await createN8nHome(STORM_VERSION, tarball);
	const { imports, ids } = credentialsFor([sandbox]);
	const workflowId = (kind: StormKind) => `storm${kind}`;
	await importAndPublish(home, {
		credentials: imports,
		workflows: kinds.map((kind) => stormWorkflow(workflowId(kind), kind, sandbox, ids[0])),
		env,
		log,
	});
	const server = await startN8nServer(home, { env, timeoutMs: 180_000 });
	const url = (kind: StormKind) => `${server.url}/webhook/${webhookPath(workflowId(kind))}`;
	for (const kind of kinds) await waitForWebhook(url(kind), 'POST');
	log(`n8n start ready in ${server.bootMs} ms (pid ${server.pid})`);
	return {
		url,
		pid: server.pid,
		home,
		async stop() {
			await server.stop();
			removeHome(home);
		},
	};
}

const LABELS: Record<StormKind, string> = {
	ours: 'Invoice Service (defaults)',
	http: 'HTTP Request 4.2, Retry On Fail 5 × 1 s',
	noop: 'floor: Webhook → respond',
};

export async function runS1(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	const sandbox = await startSandbox({ rateLimit: STORM_RATE, seed: 17 });
	const server = await stormServer(sandbox, tarball, ['ours', 'http', 'noop']);
	const measured: StormMeasured[] = [];
	let oursEnded = 0;
	const run = async (group: string, kind: StormKind, events: number, repeat: number) => {
		if (kind === 'ours') {
			const wait = oursEnded + PACE_FORGOTTEN_MS - Date.now();
			if (wait > 0) await new Promise((r) => setTimeout(r, wait));
		}
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
		};
		measured.push(await measureStorm(sandbox, spec));
		if (kind === 'ours') oursEnded = Date.now();
	};
	try {
		// Interleaved, so that a change of load on the machine falls on every variant alike.
		for (let repeat = 1; repeat <= plan.runs; repeat++) {
			for (const kind of ['ours', 'http', 'noop'] as const)
				await run('S1', kind, S1_EVENTS, repeat);
		}
		for (const size of plan.sizes) await run('S1 sizes', 'ours', size, 1);
	} finally {
		await server.stop();
		await sandbox.close();
	}
	return measured;
}

/** The whole storm bench: S1, S2, the report. */
export async function stormBench(quick: boolean): Promise<void> {
	const plan = stormPlan(quick);
	await ensureN8nInstalled([STORM_VERSION]);
	const tarball = await packPackage({ echo: false });
	const measured = await runS1(plan, tarball);
	fs.writeFileSync(
		path.join(os.tmpdir(), 'storm-measured.json'),
		JSON.stringify(measured, null, 1),
	);
}
