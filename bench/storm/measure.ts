// One storm measured: the sandbox reset, the n8n processes' CPU read before and after, the events posted
// (loadgen.ts), then what the service saw matched to the events by e-mail: created exactly once, duplicated,
// lost; requests, 429 answers, when the last invoice was made, each event's time to its invoice.
import * as os from 'node:os';

import { sleep } from 'n8n-workflow';

import type { Sandbox } from '../../sandbox/server';
import { fmt, log } from '../measure';
import { treeCpuSeconds } from '../proc';
import { storm } from './loadgen';
import { eventBody, eventEmail, type StormKind } from './workflows';

/** The service's two create routes (the rate limit applies to them only, not to PDF downloads). */
const CREATE_PATHS = ['/api/1.1/wf/create-customer', '/api/1.1/wf/create-invoice'];

export interface StormSpec {
	/** What the report groups by, e.g. "S1", "S1 sizes", "S2 1 worker". */
	group: string;
	kind: StormKind;
	label: string;
	url: string;
	events: number;
	withinMs: number;
	concurrency: number;
	repeat: number;
	/** The n8n processes whose CPU counts (name → pid of the process tree's root). */
	processes: Record<string, number>;
	/** Other processes whose CPU is shown but not counted as n8n's (PostgreSQL, Redis). */
	services?: Record<string, number>;
	/** Every POST in the order sent, when some events are delivered more than once (default: each once, evenly). */
	deliveries?: Delivery[];
}

/** One POST of event `event` (0 … events − 1), due `atMs` after the first. */
export interface Delivery {
	event: number;
	atMs: number;
}

export interface StormMeasured {
	spec: StormSpec;
	load: [number, number];
	sendSpanMs: number;
	/** Answers 2xx, and the others (n8n's 500 for a failed execution, timeouts). */
	answeredOk: number;
	answeredError: number;
	firstError?: string;
	exactlyOnce: number;
	/** Customers or invoices beyond the first for one event. */
	duplicates: number;
	/** Events without an invoice. */
	lost: number;
	/** Events with more than one invoice. */
	duplicatedEvents: number;
	/** Answers that said the event's records had been created before (the Idempotency Key's second output). */
	answeredAlreadyCreated: number;
	createRequests: number;
	rateLimited: number;
	pdfDownloads: number;
	/** From the first event sent to the last invoice created (NaN without invoices). */
	lastInvoiceMs: number;
	/** Event sent → its invoice created, over events with an invoice. */
	p50Ms: number;
	p95Ms: number;
	/** From the first event sent to the last answer. */
	wallMs: number;
	/** CPU seconds per process (n8n's and the services'), over the storm and until n8n went idle. */
	cpuS: Record<string, number>;
	/** Sum of the n8n processes' CPU ÷ events, in ms. */
	cpuPerEventMs: number;
	/** Creates the service accepted (customers + invoices) in each second from the first event on: the pace. */
	acceptedPerSecond: number[];
	/** 429 answers in each second from the first event on (the sandbox's counter, read once a second). */
	refusedPerSecond: number[];
}

function percentile(sorted: number[], p: number): number {
	if (!sorted.length) return NaN;
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function cpuOf(pids: Record<string, number>): Record<string, number> {
	return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, treeCpuSeconds(pid)]));
}

/** After the last answer n8n still saves the executions: wait until its processes use under 5 % of a core. */
async function settle(pids: number[]): Promise<void> {
	const total = () => pids.reduce((sum, pid) => sum + treeCpuSeconds(pid), 0);
	for (let i = 0, before = total(); i < 60; i++) {
		await sleep(500);
		const now = total();
		if (now - before < 0.025) return;
		before = now;
	}
}

export async function measureStorm(sandbox: Sandbox, spec: StormSpec): Promise<StormMeasured> {
	sandbox.reset();
	const tag = `${spec.group.replace(/\W+/g, '')}-${spec.kind}-${spec.repeat}`;
	const loadBefore = os.loadavg()[0];
	log(
		`${spec.group} ${spec.label}${spec.repeat > 1 ? ` (run ${spec.repeat})` : ''}: ${spec.events} events in ${spec.withinMs / 1000} s, load ${fmt(loadBefore)} ...`,
	);
	const all = { ...spec.processes, ...spec.services };
	const before = cpuOf(all);
	const refusedPerSecond: number[] = [];
	let refusedSoFar = 0;
	const sampler = setInterval(() => {
		const now = sandbox.stats().faults.rateLimited;
		refusedPerSecond.push(now - refusedSoFar);
		refusedSoFar = now;
	}, 1000);
	const eventOf = (i: number) => spec.deliveries?.[i].event ?? i;
	const result = await storm({
		url: spec.url,
		events: spec.deliveries?.length ?? spec.events,
		withinMs: spec.withinMs,
		concurrency: spec.concurrency,
		offsetsMs: spec.deliveries?.map((d) => d.atMs),
		body: (i) => eventBody(tag, eventOf(i)),
	}).finally(() => clearInterval(sampler));
	const wallMs = Math.max(...result.events.map((e) => e.doneAt)) - result.startedAt;
	await settle(Object.values(spec.processes));
	const after = cpuOf(all);
	const cpuS = Object.fromEntries(
		Object.keys(all).map((name) => [name, after[name] - before[name]]),
	);

	const { customers, invoices } = sandbox.records();
	const stats = sandbox.stats();
	const customersByEmail = new Map<string, string[]>();
	for (const c of customers) {
		const email = c.email.toLowerCase();
		customersByEmail.set(email, [...(customersByEmail.get(email) ?? []), c.id]);
	}
	const invoicesByCustomer = new Map<string, number[]>();
	for (const inv of invoices) {
		invoicesByCustomer.set(inv.customerId, [
			...(invoicesByCustomer.get(inv.customerId) ?? []),
			Date.parse(inv.createdAt),
		]);
	}
	// An event's latency counts from its first delivery.
	const firstSent = new Map<number, number>();
	for (const delivery of result.events) {
		const event = eventOf(delivery.i);
		firstSent.set(event, Math.min(firstSent.get(event) ?? Infinity, delivery.sentAt));
	}
	let exactlyOnce = 0;
	let duplicates = 0;
	let duplicatedEvents = 0;
	let lost = 0;
	const latencies: number[] = [];
	for (const [event, sentAt] of firstSent) {
		const ids = customersByEmail.get(eventEmail(tag, event)) ?? [];
		const made = ids.flatMap((id) => invoicesByCustomer.get(id) ?? []);
		duplicates += Math.max(0, ids.length - 1) + Math.max(0, made.length - 1);
		if (made.length > 1) duplicatedEvents++;
		if (!made.length) lost++;
		else latencies.push(Math.min(...made) - sentAt);
		if (ids.length === 1 && made.length === 1) exactlyOnce++;
	}
	latencies.sort((a, b) => a - b);
	const acceptedPerSecond: number[] = [];
	for (const record of [...customers, ...invoices]) {
		const second = Math.floor((Date.parse(record.createdAt) - result.startedAt) / 1000);
		while (acceptedPerSecond.length <= second) acceptedPerSecond.push(0);
		acceptedPerSecond[second]++;
	}
	const invoiceTimes = invoices.map((inv) => Date.parse(inv.createdAt));
	const failed = result.events.filter((e) => e.status < 200 || e.status >= 300);
	const n8nCpu = Object.keys(spec.processes).reduce((sum, name) => sum + cpuS[name], 0);
	const m: StormMeasured = {
		spec,
		load: [loadBefore, os.loadavg()[0]],
		sendSpanMs: result.sendSpanMs,
		answeredOk: result.events.length - failed.length,
		answeredError: failed.length,
		firstError: failed[0] ? `${failed[0].status} ${failed[0].text.slice(0, 160)}` : undefined,
		exactlyOnce,
		duplicates,
		lost,
		duplicatedEvents,
		answeredAlreadyCreated: result.events.filter((e) => e.text.includes('"alreadyCreated":true'))
			.length,
		createRequests: CREATE_PATHS.reduce((sum, p) => sum + (stats.requests.byPath[p] ?? 0), 0),
		rateLimited: stats.faults.rateLimited,
		pdfDownloads: stats.pdf.downloads,
		lastInvoiceMs: invoiceTimes.length ? Math.max(...invoiceTimes) - result.startedAt : NaN,
		p50Ms: percentile(latencies, 50),
		p95Ms: percentile(latencies, 95),
		wallMs,
		cpuS,
		cpuPerEventMs: (n8nCpu * 1000) / spec.events,
		acceptedPerSecond,
		refusedPerSecond,
	};
	log(
		`  sent in ${fmt(m.sendSpanMs / 1000, 1)} s; answers ${m.answeredOk} ok / ${m.answeredError} failed; exactly once ${m.exactlyOnce}, duplicates ${m.duplicates} (events ${m.duplicatedEvents}), lost ${m.lost}, answered "already created" ${m.answeredAlreadyCreated}; creates ${m.createRequests}, 429 ${m.rateLimited}; last invoice ${fmt(m.lastInvoiceMs / 1000, 1)} s; p50/p95 ${fmt(m.p50Ms / 1000, 1)}/${fmt(m.p95Ms / 1000, 1)} s; CPU ${Object.entries(
			cpuS,
		)
			.map(([name, s]) => `${name} ${fmt(s)} s`)
			.join(
				', ',
			)}; ${fmt(m.cpuPerEventMs, 0)} ms/event; load ${fmt(m.load[0])} → ${fmt(m.load[1])}${m.firstError ? `; first error: ${m.firstError}` : ''}`,
	);
	return m;
}
