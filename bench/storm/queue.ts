// Queue mode as n8n documents it, for the storms that need it (S2, the re-delivery storm): a main (`n8n start`,
// receives the webhooks, enqueues), workers (`n8n worker`), Redis and PostgreSQL (test/support), all on this
// machine, as the queue-mode e2e deploys them: each process with its own user folder (the package installed in
// each), binary data (the PDF) in the shared database.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSandbox, type Sandbox, type SandboxStartOptions } from '../../sandbox/server';
import {
	createN8nHome,
	removeHome,
	startN8nWorker,
	type N8nHome,
	type ProcessHandle,
} from '../../tools/n8n';
import { startPostgres } from '../../test/support/postgres';
import { redisServerBin, startRedis } from '../../test/support/redis';
import { log } from '../measure';
import { STORM_VERSION, WORKER_CONCURRENCY } from './plan';
import { stormServer, type StormServer } from './server';
import type { StormKind } from './workflows';

export interface QueueMode {
	sandbox: Sandbox;
	/** The main's production webhook URL of a workflow kind. */
	url(kind: StormKind): string;
	/** Starts one more worker (`--concurrency=WORKER_CONCURRENCY`) and waits until it is ready. */
	addWorker(): Promise<void>;
	/** The n8n processes whose CPU counts: main, worker 1, worker 2, … */
	processes(): Record<string, number>;
	/** PostgreSQL's and Redis' process trees (their CPU is shown, not counted as n8n's). */
	services: Record<string, number>;
}

/** The postmaster's pid (first line of postmaster.pid); its backends are its children. */
function postmasterPid(dataDir: string): number {
	return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** A queue-mode n8n (no worker yet) with the workflows of `kinds` published, for `body`; all ended after it. */
export async function withQueueMode(
	tarball: string,
	sandboxOptions: SandboxStartOptions,
	kinds: StormKind[],
	body: (queue: QueueMode) => Promise<void>,
): Promise<void> {
	const sandbox = await startSandbox(sandboxOptions);
	const pg = await startPostgres();
	const redis = await startRedis(redisServerBin());
	const workers: ProcessHandle[] = [];
	const workerHomes: N8nHome[] = [];
	let main: StormServer | undefined;
	try {
		const env = {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			...pg.env,
			// n8n 2.x's default in queue mode, said out loud: files on one process's disk are not on another's.
			N8N_DEFAULT_BINARY_DATA_MODE: 'database',
		};
		main = await stormServer(sandbox, tarball, kinds, env);
		const mainPid = main.pid;
		await body({
			sandbox,
			url: main.url,
			async addWorker() {
				const home = await createN8nHome(STORM_VERSION, tarball);
				workerHomes.push(home);
				// STORM_WORKER_NODE_OPTIONS: the workers' Node.js options, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` for
				// where their CPU goes (bench/results-key-cost.md).
				const nodeOptions = process.env.STORM_WORKER_NODE_OPTIONS;
				const workerEnv = nodeOptions ? { ...env, NODE_OPTIONS: nodeOptions } : env;
				workers.push(
					await startN8nWorker(home, { env: workerEnv, concurrency: WORKER_CONCURRENCY }),
				);
				log(`worker ${workers.length} ready`);
			},
			processes() {
				const processes: Record<string, number> = { main: mainPid };
				workers.forEach((w, i) => (processes[`worker ${i + 1}`] = w.child.pid!));
				return processes;
			},
			services: {
				postgres: postmasterPid(path.join(pg.dir, 'data')),
				redis: redis.server.child.pid!,
			},
		});
	} finally {
		await Promise.allSettled(workers.map((w) => w.stop()));
		workerHomes.forEach(removeHome);
		await main?.stop();
		await redis.server.stop();
		fs.rmSync(redis.dir, { recursive: true, force: true });
		await pg.close();
		await sandbox.close();
	}
}
