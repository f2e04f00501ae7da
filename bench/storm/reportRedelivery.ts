// The re-delivery storm's part of the storm report (redelivery.ts): duplicates and lost events with the Idempotency
// Key and without it, in one n8n and in queue mode; what the key costs in CPU per event and time (P3, P1).
import { fmt } from '../measure';
import { table, verdict } from '../report';
import { busy, loads, med, rateBoundS, sec, type Runs, type StormSection } from './figures';
import type { StormMeasured } from './measure';
// The storms' sizes and limits, named as such: plan.S1_EVENTS, plan.STORM_RATE ...
import * as plan from './plan';
import { HISTORY_SIZE, REDELIVERED_SHARE, REDELIVERY_DELAY_MS } from './redelivery';

const KEY = "`{{ $('Webhook').item.json.body.eventId }}`";
const each = (runs: Runs, value: (m: StormMeasured) => number) => runs.map(value).join(', ');
const cpu = (runs: Runs) => med(runs, (m) => m.cpuPerEventMs);
const lastInvoice = (runs: Runs) => med(runs, (m) => m.lastInvoiceMs);
/** No event with a second invoice (or customer), none without an invoice, in every run. */
const clean = (runs: Runs) => runs.every((m) => m.duplicates === 0 && m.lost === 0);

export function redeliverySection(section: StormSection): void {
	section.lines.push(
		...redelivered(section),
		...cost(
			section.runs(plan.GROUPS.keyCost, 'ours'),
			section.runs(plan.GROUPS.keyCost, 'keyed'),
			section.runs(plan.GROUPS.keyCostFull, 'keyed'),
		),
	);
}

function redelivered(section: StormSection): string[] {
	const setups = [
		{ group: plan.GROUPS.redeliveryOne, label: `one n8n, ${plan.STORM_RATE.perSecond} creates/s` },
		{
			group: plan.GROUPS.redeliveryQueue,
			label: `queue mode, 2 workers × ${plan.WORKER_CONCURRENCY}`,
		},
	];
	const rows: string[][] = [];
	const goals: string[] = [];
	for (const { group, label } of setups) {
		for (const [kind, key] of [
			['keyed', 'on'],
			['ours', 'off'],
		] as const) {
			const found = section.runs(group, kind);
			if (!found.length) continue;
			rows.push([
				label,
				key,
				String(found[0].spec.deliveries?.length ?? found[0].spec.events),
				each(found, (m) => m.duplicatedEvents),
				each(found, (m) => m.duplicates),
				each(found, (m) => m.lost),
				each(found, (m) => m.answeredAlreadyCreated),
				each(found, (m) => m.answeredError),
				fmt(
					med(found, (m) => m.createRequests),
					0,
				),
				sec(lastInvoice(found)),
				fmt(cpu(found), 0),
				loads(found),
			]);
			if (kind === 'keyed') goals.push(`${label}: ${verdict(clean(found))}`);
		}
	}
	if (!rows.length) return [];
	const again = Math.round(REDELIVERED_SHARE * plan.S1_EVENTS);
	return [
		`### Re-delivery: ${plan.S1_EVENTS} events, ${again} of them delivered a second time 0–${REDELIVERY_DELAY_MS / 1000} s after the first`,
		'',
		`S1's storm (${plan.S1_EVENTS} events within ${plan.S1_WITHIN_MS / 1000} s), and for ${fmt(REDELIVERED_SHARE * 100, 0)} % of the events, picked at random (seeded, a new draw each run, the same for key on and off), the same POST again ${REDELIVERY_DELAY_MS / 1000} s or less after the first (uniform): ${plan.S1_EVENTS + again} POSTs, as a sender that retries on a slow answer does. Key on: Options → Idempotency Key ${KEY} on Customer → Create and on Invoice → Create, each node's "Already Created" output answered by a second Respond to Webhook. Key off: the S1 workflow. One n8n: S1's (SQLite, the service limiting creates to ${plan.STORM_RATE.perSecond}/s). Queue mode: S2's set-up with 2 workers (PostgreSQL, Redis, the service answering after ${plan.S2_LATENCY_MS} ms, no limit). **Events with > 1 invoice** are the duplicates the customer sees; **extra records** counts every customer and invoice beyond an event's first; **lost** = events without an invoice. CPU per event = the n8n processes' CPU ÷ ${plan.S1_EVENTS} events (the second deliveries included).`,
		'',
		...table(
			[
				'setup',
				'key',
				'POSTs',
				'events with > 1 invoice (each run)',
				'extra records (each run)',
				'lost (each run)',
				'answered "already created" (each run)',
				'answered with an error (each run)',
				'create requests',
				'last invoice (s)',
				'CPU per event (ms)',
				'load (each run)',
			],
			rows,
		),
		'',
		`Goal: with the key, 0 duplicates and 0 lost in every run: ${goals.join('; ')}.`,
		'',
	];
}

function cost(off: Runs, on: Runs, full: Runs): string[] {
	if (!off.length || !on.length) return [];
	const bound = rateBoundS(plan.S1_EVENTS);
	const row = (runs: Runs, label: string) => [
		label,
		`${med(runs, (m) => m.exactlyOnce)} / ${plan.S1_EVENTS}`,
		each(runs, (m) => m.lost),
		sec(lastInvoice(runs)),
		fmt(lastInvoice(runs) / 1000 / bound),
		`${sec(med(runs, (m) => m.p50Ms))} / ${sec(med(runs, (m) => m.p95Ms))}`,
		each(runs, (m) => Math.round(m.cpuPerEventMs)),
		fmt(cpu(runs), 0),
		fmt(med(runs, (m) => busy(m, 'n8n'))),
		loads(runs),
	];
	// Key on ÷ off: the medians, and each run's pair (the runs of one repeat ran next to each other).
	const goals = (keyed: Runs, label: string) => {
		const cpuRatio = cpu(keyed) / cpu(off);
		const timeRatio = lastInvoice(keyed) / lastInvoice(off);
		const pairs = keyed
			.map((m, i) => off[i] && fmt(m.cpuPerEventMs / off[i].cpuPerEventMs))
			.join(', ');
		return `${label}: CPU per event ÷ no key ≤ 1.1 (P3) **${fmt(cpuRatio)}** ${verdict(cpuRatio <= 1.1)} (each run's pair: ${pairs}); time to the last invoice ÷ no key ≤ 1.1 (P1) **${fmt(timeRatio)}** ${verdict(timeRatio <= 1.1)}`;
	};
	return [
		`### What the key costs: S1's storm, each event once, with the key and without`,
		'',
		`The same n8n, the same ${plan.S1_EVENTS} events within ${plan.S1_WITHIN_MS / 1000} s, the service limiting creates to ${plan.STORM_RATE.perSecond}/s; without and with the key alternate (the order swapped each run), then the key with the store full. With the key each event's two creates first claim their key in n8n's processed-data store (SQLite here), which keeps one row per node (a JSON list of key hashes) and reads and writes it whole for each write (the node lets the claims that arrive during a write go together in the next): "store fresh" starts each run with no keys (${plan.S1_EVENTS} a node at the end), "store full" with History Size's default ${HISTORY_SIZE.toLocaleString('en-US')} a node (written into the database before the run: what a workflow reaches after ${HISTORY_SIZE.toLocaleString('en-US')} events; it stays full). CPU per event is this bench's per-item CPU (one item per execution): the P3 comparison; the last invoice is the storm's time (the bound is the service's limit): the P1 comparison.`,
		'',
		...table(
			[
				'variant',
				'exactly once',
				'lost (each run)',
				'last invoice (s)',
				'÷ bound',
				'p50 / p95 latency (s)',
				'CPU per event, each run (ms)',
				'CPU per event (ms)',
				'n8n CPU busy (cores)',
				'load (each run)',
			],
			[
				row(off, 'Invoice Service, no key'),
				row(on, 'Idempotency Key on both nodes, store fresh'),
				...(full.length
					? [
							row(
								full,
								`Idempotency Key on both nodes, store full (${HISTORY_SIZE.toLocaleString('en-US')} keys a node)`,
							),
						]
					: []),
			],
		),
		'',
		`Goals — ${goals(on, 'store fresh')}${full.length ? `; ${goals(full, 'store full')}` : ''}.`,
		'',
	];
}
