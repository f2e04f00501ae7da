// S2's part of the storm report: queue mode, 1 and 2 workers, then 2 workers under the rate limit.
import { fmt } from '../measure';
import { table, verdict } from '../report';
// The figures of a group of runs, named as such: figures.med, figures.throughput ...
import * as figures from './figures';
import {
	GROUPS,
	EVENT_SERVICE_S,
	S1_EVENTS,
	S1_WITHIN_MS,
	S2_LATENCY_MS,
	STORM_RATE,
	WORKER_CONCURRENCY,
} from './plan';

export function s2Section(section: figures.StormSection): void {
	const one = section.runs(GROUPS.s2OneWorker);
	const two = section.runs(GROUPS.s2TwoWorkers);
	const limited = section.runs(GROUPS.s2Limited);
	if (!one.length && !two.length && !limited.length) return;
	const names = ['main', 'worker 1', 'worker 2', 'postgres', 'redis'];
	/** What `workers` workers can take: each runs WORKER_CONCURRENCY events at once, EVENT_SERVICE_S each. */
	const bound = (workers: number) => workers * (WORKER_CONCURRENCY / EVENT_SERVICE_S);
	const row = (runs: figures.Runs, label: string, { workers, rateBound = false }: RowOf) => [
		label,
		...figures.outcome(runs),
		rateBound
			? figures.pct(
					figures.med(runs, (m) => m.rateLimited),
					figures.med(runs, (m) => m.createRequests),
				)
			: '—',
		fmt(figures.med(runs, figures.throughput), 1),
		rateBound ? `${fmt(STORM_RATE.perSecond / 2, 1)} (the rate)` : fmt(bound(workers), 1),
		fmt(
			figures.med(runs, figures.throughput) /
				(rateBound ? STORM_RATE.perSecond / 2 : bound(workers)),
		),
		`${figures.sec(figures.med(runs, (m) => m.p50Ms))} / ${figures.sec(figures.med(runs, (m) => m.p95Ms))}`,
		names
			.map((n) =>
				runs[0].cpuS[n] === undefined ? '—' : fmt(figures.med(runs, (m) => figures.busy(m, n))),
			)
			.join(' / '),
		fmt(
			figures.med(runs, (m) => m.cpuPerEventMs),
			0,
		),
		figures.loads(runs),
	];
	const rows = [
		one.length ? row(one, '1 worker', { workers: 1 }) : [],
		two.length ? row(two, '2 workers', { workers: 2 }) : [],
		limited.length ? row(limited, '2 workers, 20 creates/s', { workers: 2, rateBound: true }) : [],
	].filter((r) => r.length);
	section.lines.push(
		`### S2: queue mode — main + workers, PostgreSQL, Redis; ${S1_EVENTS} events within ${S1_WITHIN_MS / 1000} s`,
		'',
		`Every process on this machine: \`n8n start\` (main: receives the webhooks, enqueues), \`n8n worker --concurrency=${WORKER_CONCURRENCY}\` each, PostgreSQL (test/support/postgres.ts), Redis; each n8n process with its own user folder, binary data (the PDFs) in the database (\`N8N_DEFAULT_BINARY_DATA_MODE=database\`), as the queue-mode e2e deploys it. The service answers after ${S2_LATENCY_MS} ms (creates and PDF downloads), so one event takes ${fmt(EVENT_SERVICE_S, 1)} s of service time: bound = workers × ${WORKER_CONCURRENCY} ÷ ${fmt(EVENT_SERVICE_S, 1)} s. The last row adds the ${STORM_RATE.perSecond}/s limit (its bound: ${STORM_RATE.perSecond / 2} events/s). Each worker is its own process with its own pace: they share the service's limit and nothing else, each learns it from its own 429s. CPU figures.busy = CPU seconds ÷ the storm's wall time (first event → last answer), in cores: 2 in all is this machine.`,
		'',
		...table(
			[
				'setup',
				'exactly once',
				'duplicates',
				'lost (each run)',
				'429 share',
				'events/s',
				'bound (events/s)',
				'÷ bound',
				'p50 / p95 latency (s)',
				`CPU figures.busy, cores: ${names.join(' / ')}`,
				'n8n CPU per event (ms)',
				'load (each run)',
			],
			rows,
		),
		'',
	);
	const goals: string[] = [];
	if (one.length && two.length) {
		const r1 = figures.med(one, figures.throughput) / bound(1);
		const r2 = figures.med(two, figures.throughput) / bound(2);
		goals.push(
			`each ≥ 0.8 × its bound: 1 worker ${fmt(r1)} ${verdict(r1 >= 0.8)}, 2 workers ${fmt(r2)} ${verdict(r2 >= 0.8)}; 2 workers ÷ 1 worker: ${fmt(figures.med(two, figures.throughput) / figures.med(one, figures.throughput))} × the figures.throughput`,
		);
	}
	if (limited.length) {
		goals.push(
			`with the limit, exactly once and 0 lost: ${verdict(figures.allOnce(limited))}; 429 ≤ 10 %: ${verdict(limited.every((m) => figures.share429(m) <= 0.1))} (${limited.map((m) => figures.pct(m.rateLimited, m.createRequests)).join(', ')})`,
		);
	}
	section.lines.push(`Goals: ${goals.join('; ')}.`, '');
	for (const [runs, label, workers] of [
		[one, GROUPS.s2OneWorker, 1],
		[two, GROUPS.s2TwoWorkers, 2],
	] as const) {
		if (runs.length)
			section.panels.time.push({
				label,
				values: [
					figures.med(runs, (m) => m.lastInvoiceMs) / 1000,
					undefined,
					undefined,
					S1_EVENTS / bound(workers),
				],
			});
	}
	if (limited.length)
		section.panels.time.push({
			label: GROUPS.s2Limited,
			values: [
				figures.med(limited, (m) => m.lastInvoiceMs) / 1000,
				undefined,
				undefined,
				figures.rateBoundS(S1_EVENTS),
			],
		});
}

/** A row of the S2 table: how many workers its runs had, and whether the rate limit bounds it instead. */
interface RowOf {
	workers: number;
	rateBound?: boolean;
}
