// What the storm bench runs: the storms' sizes and limits, and how many runs of each (--quick: one).
import { IDLE_MS } from '../../nodes/InvoiceService/transport/pace';
import { DEFAULT_N8N_VERSION } from '../../tools/n8n';

export const STORM_VERSION = DEFAULT_N8N_VERSION;
/** The service's limit in S1 (and S2 "limited"): 20 creates per second, a bucket of one second's worth. */
export const STORM_RATE = { perSecond: 20, burst: 20 };
/** S1's storm: this many events posted within this long. */
export const S1_EVENTS = 300;
export const S1_WITHIN_MS = 5000;
/** Requests the load generator keeps in flight at most: above every storm's size, so the schedule holds. */
export const LOADGEN_CONCURRENCY = 1000;
/** The shared pace forgets a service once idle for IDLE_MS: ours' runs start at least this far apart, each fresh. */
const PACE_FORGOTTEN_MS = IDLE_MS + 1000;

/** Waits until a run of ours that ended at `ended` is forgotten by the pace, so that the next one starts fresh. */
export async function untilPaceForgotten(ended: number): Promise<void> {
	const wait = ended + PACE_FORGOTTEN_MS - Date.now();
	if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * The groups of runs: named here once, measured by s1.ts, s2.ts and redelivery.ts, rendered by reportS1.ts,
 * reportS2.ts and reportRedelivery.ts.
 */
export const GROUPS = {
	s1: 'S1',
	s1NoLimit: 'S1 no limit',
	s1Sizes: 'S1 sizes',
	s1Capped: 'S1 capped',
	s2OneWorker: 'S2 1 worker',
	s2TwoWorkers: 'S2 2 workers',
	s2Limited: 'S2 2 workers, 20/s',
	redeliveryOne: 'Re-delivery, one n8n',
	redeliveryQueue: 'Re-delivery, queue mode 2 workers',
	keyCost: 'Key cost',
	keyCostFull: 'Key cost, store full',
} as const;

export const S2_LATENCY_MS = 200;
/**
 * Each worker's `--concurrency` (n8n's default is 10): 5 keeps one worker's bound (8.3 events/s) within what
 * the 2 cores here can run, so that 1 → 2 workers shows scaling first and then where the cores stop it.
 */
export const WORKER_CONCURRENCY = 5;
/** One event's service time: create-customer, create-invoice and the PDF download, 200 ms each. */
export const EVENT_SERVICE_S = (3 * S2_LATENCY_MS) / 1000;

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
