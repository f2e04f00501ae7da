// S1's part of the storm report: ours, HTTP Request and the floor on one n8n, and ours at other sizes.
import { fmt } from '../measure';
import { table, verdict } from '../report';
import {
	type Runs,
	type StormSection,
	allOnce,
	busy,
	loads,
	med,
	outcome,
	pct,
	rateBoundS,
	sec,
	share429,
} from './figures';
import { GROUPS, S1_EVENTS, S1_WITHIN_MS, STORM_RATE } from './plan';
import { PRODUCTION_LIMIT } from './s1';
import { HTTP_RETRY } from './workflows';

export function s1Section(section: StormSection): void {
	const ours = section.runs(GROUPS.s1, 'ours');
	const http = section.runs(GROUPS.s1, 'http');
	const noop = section.runs(GROUPS.s1, 'noop');
	const unlimited = section.runs(GROUPS.s1NoLimit, 'ours');
	const capped = section.runs(GROUPS.s1Capped, 'ours');
	if (!ours.length) return;
	const bound = rateBoundS(S1_EVENTS);
	const cpu = (runs: Runs) => med(runs, (m) => m.cpuPerEventMs);
	const row = (runs: Runs, label: string): string[] => {
		if (!runs.length) return [];
		// The floor creates nothing: only its CPU and its load are figures.
		const sends = runs[0].spec.kind !== 'noop';
		const dash = (text: string) => (sends ? text : '—');
		return [
			label,
			...outcome(runs).map(dash),
			dash(
				fmt(
					med(runs, (m) => m.createRequests),
					0,
				),
			),
			dash(
				pct(
					med(runs, (m) => m.rateLimited),
					med(runs, (m) => m.createRequests),
				),
			),
			dash(sec(med(runs, (m) => m.lastInvoiceMs))),
			dash(fmt(med(runs, (m) => m.lastInvoiceMs) / 1000 / bound)),
			dash(`${sec(med(runs, (m) => m.p50Ms))} / ${sec(med(runs, (m) => m.p95Ms))}`),
			fmt(cpu(runs), 0),
			http.length ? fmt(cpu(runs) / cpu(http)) : 'n/a',
			fmt(med(runs, (m) => busy(m, 'n8n'))),
			loads(runs),
		];
	};
	section.lines.push(
		`### S1: one n8n, ${S1_EVENTS} events within ${S1_WITHIN_MS / 1000} s, the service limiting creates to ${STORM_RATE.perSecond}/s (bucket ${STORM_RATE.burst}, 429 with Retry-After)`,
		'',
		`Bound: ${2 * S1_EVENTS} creates ÷ ${STORM_RATE.perSecond}/s = ${fmt(bound, 0)} s. SQLite, every execution saved (n8n's defaults). HTTP Request: Retry On Fail on each of its three requests, ${HTTP_RETRY.maxTries} tries ${HTTP_RETRY.waitBetweenTries / 1000} s apart, no batching (one item per execution: batching has nothing to batch). Ours: defaults (Max Retry Wait 120 s). The floor sends nothing: it is n8n's own cost of one webhook execution. Then ours with the service's limit off (the time n8n itself needs for the storm), and ours in an n8n started with \`N8N_CONCURRENCY_PRODUCTION_LIMIT=${PRODUCTION_LIMIT}\` (at most ${PRODUCTION_LIMIT} executions at once, the other events wait in n8n's queue). The goals below are for the first row, n8n's defaults.`,
		'',
		...table(
			[
				'variant',
				'exactly once',
				'duplicates',
				'lost (each run)',
				'create requests',
				'429 share',
				'last invoice (s)',
				'÷ bound',
				'p50 / p95 latency (s)',
				'CPU per event (ms)',
				'÷ HTTP Request',
				'n8n CPU busy (cores)',
				'load (each run)',
			],
			[
				row(ours, 'Invoice Service'),
				row(http, 'HTTP Request 4.2'),
				row(noop, 'floor'),
				row(unlimited, 'Invoice Service, the limit off'),
				row(capped, `Invoice Service, N8N_CONCURRENCY_PRODUCTION_LIMIT=${PRODUCTION_LIMIT}`),
			].filter((r) => r.length),
		),
		'',
		`Goals (ours): each event created exactly once, 0 lost: ${verdict(allOnce(ours))}; 429 ≤ 5 % of requests: ${verdict(ours.every((m) => share429(m) <= 0.05))} (${ours.map((m) => pct(m.rateLimited, m.createRequests)).join(', ')}); last invoice ≤ 1.15 × bound: ${verdict(med(ours, (m) => m.lastInvoiceMs) / 1000 <= 1.15 * bound)}.${noop.length ? ` The floor's ${fmt(cpu(noop), 0)} ms per event is n8n's own per-execution cost (it answered the ${S1_EVENTS} events in ${sec(med(noop, (m) => m.wallMs))} s: ${fmt(S1_EVENTS / (med(noop, (m) => m.wallMs) / 1000), 1)} executions/s is what this n8n does with nothing to send); ours adds ${fmt(cpu(ours) - cpu(noop), 0)} ms for two creates and a PDF, so one core runs at most ${fmt(1000 / cpu(ours), 1)} of ours' events/s, ${fmt((2 * 1000) / cpu(ours), 1)} creates/s.` : ''}`,
		'',
	);
	section.panels.cpu.push({
		label: `S1 ${S1_EVENTS} events`,
		values: [cpu(ours), http.length ? cpu(http) : undefined, noop.length ? cpu(noop) : undefined],
	});
	section.panels.time.push({
		label: 'S1, 20/s',
		values: [
			med(ours, (m) => m.lastInvoiceMs) / 1000,
			http.length ? med(http, (m) => m.lastInvoiceMs) / 1000 : undefined,
			undefined,
			bound,
		],
	});
}

export function sizesSection(section: StormSection): void {
	const s1 = section.runs(GROUPS.s1, 'ours');
	const sizes = [...new Set([...section.runs(GROUPS.s1Sizes).map((m) => m.spec.events), S1_EVENTS])]
		.filter((n) => n !== S1_EVENTS || s1.length)
		.sort((a, b) => a - b);
	if (sizes.length < 2) return;
	const runsOf = (n: number) => (n === S1_EVENTS ? s1 : section.runs(GROUPS.s1Sizes, 'ours', n));
	const cpus = sizes.map((n) => med(runsOf(n), (m) => m.cpuPerEventMs));
	section.lines.push(
		'### S1 at other sizes: how cost grows (ours)',
		'',
		`Posted at the same rate (${fmt(S1_EVENTS / (S1_WITHIN_MS / 1000), 0)} events/s); ${S1_EVENTS} = the medians above, the others one run.`,
		'',
		...table(
			[
				'events',
				'exactly once',
				'lost',
				'429 share',
				'last invoice ÷ bound',
				'CPU per event (ms)',
				'n8n CPU busy (cores)',
				'load',
			],
			sizes.map((n, i) => {
				const runs = runsOf(n);
				return [
					String(n),
					`${med(runs, (m) => m.exactlyOnce)} / ${n}`,
					runs.map((m) => m.lost).join(', '),
					pct(
						med(runs, (m) => m.rateLimited),
						med(runs, (m) => m.createRequests),
					),
					fmt(med(runs, (m) => m.lastInvoiceMs) / 1000 / rateBoundS(n)),
					fmt(cpus[i], 0),
					fmt(med(runs, (m) => busy(m, 'n8n'))),
					loads(runs),
				];
			}),
		),
		'',
		`Goal: CPU per event flat within 1.2 × (largest ÷ smallest ${fmt(Math.max(...cpus) / Math.min(...cpus))}): ${verdict(Math.max(...cpus) / Math.min(...cpus) <= 1.2)}.`,
		'',
	);
	const paced = sizes.flatMap(runsOf).filter((m) => m.refusedPerSecond?.length);
	if (paced.length) {
		const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
		section.lines.push(
			`Where ours' 429 answers fall (429s in the first 5 s, the burst before the pace is learned, + later; the most creates accepted in one second after the first 5 s, the limit being ${STORM_RATE.perSecond}): ${paced
				.map(
					(m) =>
						`${m.spec.events} events${m.spec.group === GROUPS.s1 ? ` run ${m.spec.repeat}` : ''}: ${sum(m.refusedPerSecond.slice(0, 5))} + ${sum(m.refusedPerSecond.slice(5))}, ${Math.max(...m.acceptedPerSecond.slice(5))}/s`,
				)
				.join('; ')}.`,
			'',
		);
	}
	sizes.forEach((n, i) => {
		if (n !== S1_EVENTS) section.panels.cpu.push({ label: `ours ${n} events`, values: [cpus[i]] });
	});
}
