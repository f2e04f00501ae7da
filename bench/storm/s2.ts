// S2: the storm in queue mode as n8n documents it — a main (`n8n start`, receives the webhook, enqueues),
// workers (`n8n worker`), Redis and PostgreSQL (test/support), all on this machine, as the queue-mode e2e
// deploys them: each process with its own user folder (the package installed in each), binary data (the PDF) in
// the shared database. The service answers after 200 ms, no rate limit: 1 worker, then 2; then the 20/s limit
// on with 2 workers.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSandbox } from '../../sandbox/server';
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
import { measureStorm, type StormMeasured } from './measure';
import {
	LOADGEN_CONCURRENCY,
	GROUPS,
	untilPaceForgotten,
	S1_EVENTS,
	S1_WITHIN_MS,
	S2_LATENCY_MS,
	STORM_RATE,
	STORM_VERSION,
	WORKER_CONCURRENCY,
	type StormPlan,
} from './plan';
import { stormServer } from './server';

/** The postmaster's pid (first line of postmaster.pid); its backends are its children. */
function postmasterPid(dataDir: string): number {
	return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

export async function runS2(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	const sandbox = await startSandbox({ latencyMs: S2_LATENCY_MS, seed: 18 });
	const pg = await startPostgres();
	const redis = await startRedis(redisServerBin());
	const workers: ProcessHandle[] = [];
	const workerHomes: N8nHome[] = [];
	let main: Awaited<ReturnType<typeof stormServer>> | undefined;
	const measured: StormMeasured[] = [];
	try {
		const env = {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			...pg.env,
			// n8n 2.x's default in queue mode, said out loud: files on one process's disk are not on another's.
			N8N_DEFAULT_BINARY_DATA_MODE: 'database',
		};
		main = await stormServer(sandbox, tarball, ['ours'], env);
		const services = {
			postgres: postmasterPid(path.join(pg.dir, 'data')),
			redis: redis.server.child.pid!,
		};
		const addWorker = async () => {
			const home = await createN8nHome(STORM_VERSION, tarball);
			workerHomes.push(home);
			workers.push(await startN8nWorker(home, { env, concurrency: WORKER_CONCURRENCY }));
			log(`worker ${workers.length} ready`);
		};
		let ended = 0;
		const series = async (group: string, { paced }: { paced: boolean }) => {
			for (let repeat = 1; repeat <= plan.runs; repeat++) {
				// Each worker's pace starts fresh, as after a quiet time (see run.ts).
				if (paced && repeat > 1) await untilPaceForgotten(ended);
				const processes: Record<string, number> = { main: main!.pid };
				workers.forEach((w, i) => (processes[`worker ${i + 1}`] = w.child.pid!));
				measured.push(
					await measureStorm(sandbox, {
						group,
						kind: 'ours',
						label: `${workers.length} worker${workers.length > 1 ? 's' : ''} × concurrency ${WORKER_CONCURRENCY}`,
						url: main!.url('ours'),
						events: S1_EVENTS,
						withinMs: S1_WITHIN_MS,
						concurrency: LOADGEN_CONCURRENCY,
						repeat,
						processes,
						services,
					}),
				);
				ended = Date.now();
			}
		};
		await addWorker();
		await series(GROUPS.s2OneWorker, { paced: false });
		await addWorker();
		await series(GROUPS.s2TwoWorkers, { paced: false });
		sandbox.configure({ rateLimit: STORM_RATE });
		await series(GROUPS.s2Limited, { paced: true });
	} finally {
		await Promise.allSettled(workers.map((w) => w.stop()));
		workerHomes.forEach(removeHome);
		await main?.stop();
		await redis.server.stop();
		fs.rmSync(redis.dir, { recursive: true, force: true });
		await pg.close();
		await sandbox.close();
	}
	return measured;
}
