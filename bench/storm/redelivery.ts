// The re-delivery storm (issue 22): S1's storm in which a share of the events is delivered a second time soon
// after the first, as webhook senders do on a slow answer; with the Idempotency Key on both nodes, and without it
// (what a repeated event does then); in one n8n (S1's service, limited to 20/s) and in queue mode with 2 workers
// (S2's set-up). And what the key costs: S1's storm, each event once, with the key and without, and with the
// key's store full (History Size's default number of keys).
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

import { createRng } from '../../sandbox/server';
import { measureStorm, type Delivery, type StormMeasured } from './measure';
import {
	GROUPS,
	LOADGEN_CONCURRENCY,
	S1_EVENTS,
	S1_WITHIN_MS,
	S2_LATENCY_MS,
	type StormPlan,
} from './plan';
import { withQueueMode } from './queue';
import { withServer } from './s1';

/** The share of events delivered twice, and the longest wait of a second delivery after the first. */
export const REDELIVERED_SHARE = 0.2;
export const REDELIVERY_DELAY_MS = 2000;

/** The node's default History Size: how many keys each node's row in the store holds at most. */
export const HISTORY_SIZE = 10_000;

/**
 * S1's schedule (the events evenly over S1_WITHIN_MS) and, for a seeded random REDELIVERED_SHARE of them, a
 * second delivery 0 to REDELIVERY_DELAY_MS after the first; sorted by when each is due.
 */
export function redeliverySchedule(seed: number): Delivery[] {
	const random = createRng(seed);
	const gapMs = S1_WITHIN_MS / (S1_EVENTS - 1);
	const events = Array.from({ length: S1_EVENTS }, (_, event) => event);
	// A seeded shuffle's first share: exactly that many events, each picked alike.
	for (let i = events.length - 1; i > 0; i--) {
		const j = Math.floor(random() * (i + 1));
		[events[i], events[j]] = [events[j], events[i]];
	}
	const again = events.slice(0, Math.round(REDELIVERED_SHARE * S1_EVENTS));
	return [
		...events.map((event) => ({ event, atMs: event * gapMs })),
		...again.map((event) => ({ event, atMs: event * gapMs + random() * REDELIVERY_DELAY_MS })),
	].sort((a, b) => a.atMs - b.atMs);
}

/** One n8n, the service limiting creates to 20/s (S1's): with the key, then without, `runs` times. */
export function runRedelivery(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	return withServer(tarball, ['keyed', 'ours'], {}, async (run) => {
		for (let repeat = 1; repeat <= plan.runs; repeat++) {
			const deliveries = redeliverySchedule(22 + repeat);
			await run(GROUPS.redeliveryOne, 'keyed', S1_EVENTS, repeat, deliveries);
			await run(GROUPS.redeliveryOne, 'ours', S1_EVENTS, repeat, deliveries);
		}
	});
}

/**
 * n8n's processed-data store keeps one row per node (a JSON list of MD5 hashes) and reads and writes it whole
 * for every key: sets each row the keyed workflow has made to `keys` keys of earlier events. HISTORY_SIZE is
 * the state a workflow reaches after 10,000 events (later keys push the oldest out: it stays full); 0, a
 * fresh start.
 */
function setKeyStore(n8nDir: string, keys: number): void {
	const hashes = Array.from({ length: keys }, (_, i) =>
		createHash('md5').update(`earlier event ${i}`).digest('base64'),
	);
	const db = new DatabaseSync(path.join(n8nDir, 'database.sqlite'));
	try {
		// Only the keyed workflow's two nodes use the store in this n8n.
		const { changes } = db
			.prepare('UPDATE processed_data SET value = ?')
			.run(JSON.stringify({ mode: 'entries', data: hashes }));
		// Before the first keyed storm there are no rows yet: a fresh start too.
		if (keys && Number(changes) !== 2) throw new Error(`expected 2 rows of keys, found ${changes}`);
	} finally {
		db.close();
	}
}

/**
 * S1's storm, each event once: ours without the key and with it, interleaved, `runs` times; then, each run,
 * with the key and each node's store full.
 */
export function runKeyCost(plan: StormPlan, tarball: string): Promise<StormMeasured[]> {
	return withServer(tarball, ['ours', 'keyed'], {}, async (run, _sandbox, server) => {
		for (let repeat = 1; repeat <= plan.runs; repeat++) {
			// Each pair in the other order than the one before, so that neither always runs on a warmer n8n.
			const kinds = repeat % 2 ? (['ours', 'keyed'] as const) : (['keyed', 'ours'] as const);
			for (const kind of kinds) {
				if (kind === 'keyed') setKeyStore(server.n8nDir, 0);
				await run(GROUPS.keyCost, kind, S1_EVENTS, repeat);
			}
			setKeyStore(server.n8nDir, HISTORY_SIZE);
			await run(GROUPS.keyCostFull, 'keyed', S1_EVENTS, repeat);
		}
	});
}

/** The queue storm's kinds: both, or those in STORM_KINDS (`keyed` alone, for a profile of the key's cost). */
function queueKinds(): Array<'keyed' | 'ours'> {
	const named = process.env.STORM_KINDS?.split(',');
	return (['keyed', 'ours'] as const).filter((kind) => !named || named.includes(kind));
}

/**
 * Queue mode with 2 workers (S2's set-up: the service answers after 200 ms, no limit): a storm of each kind not counted,
 * then with the key and without, in turns.
 */
export async function runRedeliveryQueue(
	plan: StormPlan,
	tarball: string,
): Promise<StormMeasured[]> {
	const measured: StormMeasured[] = [];
	await withQueueMode(
		tarball,
		{ latencyMs: S2_LATENCY_MS, seed: 22 },
		['keyed', 'ours'],
		async (queue) => {
			await queue.addWorker();
			await queue.addWorker();
			const storm = async (kind: 'keyed' | 'ours', repeat: number) =>
				await measureStorm(queue.sandbox, {
					group: GROUPS.redeliveryQueue,
					kind,
					label: `${kind === 'keyed' ? 'Idempotency Key on both nodes' : 'no key'}${repeat ? '' : ', warm-up (not counted)'}`,
					url: queue.url(kind),
					events: S1_EVENTS,
					withinMs: S1_WITHIN_MS,
					concurrency: LOADGEN_CONCURRENCY,
					repeat,
					processes: queue.processes(),
					services: queue.services,
					deliveries: redeliverySchedule(22 + repeat),
				});
			// Fresh workers spend their first storm warming up (about 10 s of CPU each, 2026-11-29): unmeasured, else the
			// kind that runs first pays it.
			for (const kind of queueKinds()) await storm(kind, 0);
			for (let repeat = 1; repeat <= plan.runs; repeat++) {
				for (const kind of queueKinds()) measured.push(await storm(kind, repeat));
			}
		},
	);
	return measured;
}
