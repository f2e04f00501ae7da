// S2: the storm in queue mode (queue.ts: a main, workers, Redis and PostgreSQL, all on this machine). The
// service answers after 200 ms, no rate limit: 1 worker, then 2; then the 20/s limit on with 2 workers.
import { measureStorm, type StormMeasured } from './measure';
import {
	LOADGEN_CONCURRENCY,
	GROUPS,
	untilPaceForgotten,
	S1_EVENTS,
	S1_WITHIN_MS,
	S2_LATENCY_MS,
	STORM_RATE,
	WORKER_CONCURRENCY,
	type StormPlan,
} from './plan';
import { withQueueMode } from './queue';

export async function runS2(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	const measured: StormMeasured[] = [];
	await withQueueMode(tarball, { latencyMs: S2_LATENCY_MS, seed: 18 }, ['ours'], async (queue) => {
		let ended = 0;
		const series = async (group: string, { paced }: { paced: boolean }) => {
			for (let repeat = 1; repeat <= plan.runs; repeat++) {
				// Each worker's pace starts fresh, as after a quiet time (see run.ts).
				if (paced && repeat > 1) await untilPaceForgotten(ended);
				const processes = queue.processes();
				const workers = Object.keys(processes).length - 1;
				measured.push(
					await measureStorm(queue.sandbox, {
						group,
						kind: 'ours',
						label: `${workers} worker${workers > 1 ? 's' : ''} × concurrency ${WORKER_CONCURRENCY}`,
						url: queue.url('ours'),
						events: S1_EVENTS,
						withinMs: S1_WITHIN_MS,
						concurrency: LOADGEN_CONCURRENCY,
						repeat,
						processes,
						services: queue.services,
					}),
				);
				ended = Date.now();
			}
		};
		await queue.addWorker();
		await series(GROUPS.s2OneWorker, { paced: false });
		await queue.addWorker();
		await series(GROUPS.s2TwoWorkers, { paced: false });
		queue.sandbox.configure({ rateLimit: STORM_RATE });
		await series(GROUPS.s2Limited, { paced: true });
	});
	return measured;
}
