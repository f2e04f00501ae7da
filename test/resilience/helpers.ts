// Shared pieces of the resilience suites: the real Invoice Service node inside n8n-core's WorkflowExecute
// (test/support/harness/) talking real HTTP over loopback to the sandbox (sandbox/server.ts), and
// the bookkeeping that proves every input item is accounted for exactly once.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import type { Sandbox } from '../../sandbox/server';
import type { OnError, RunResult } from '../support/harness/run-node';
import { runInvoiceService } from '../support/invoice-service';

/** The node's "Outcome unknown" wording (transport/errors.ts). */
export const OUTCOME_UNKNOWN = /outcome unknown/i;

export interface CustomerInput extends IDataObject {
	first: string;
	last: string;
	email: string;
}

/** `count` customers with unique e-mails (a run tag keeps runs apart even on one sandbox). */
export function customers(count: number, tag: string): CustomerInput[] {
	return Array.from({ length: count }, (_, i) => ({
		first: `First${i}`,
		last: `Last${i}`,
		email: `c${i}.${tag}@example.com`,
	}));
}

/** Runs the Invoice Service node in-process against a base URL (the sandbox or a proxy in front of it). */
export async function runAgainst(
	baseUrl: string,
	apiKey: string,
	parameters: INodeParameters,
	items: IDataObject[],
	onError?: OnError,
): Promise<RunResult> {
	return await runInvoiceService({
		parameters,
		items,
		onError,
		credentials: { baseUrl, apiKey, allowHttp: true },
	});
}

export interface ItemError {
	message: string;
	description?: string;
	httpCode?: string;
}

/**
 * The error an error item carries: `json.error` is `{ message, description, httpCode, itemIndex }` (older shapes:
 * a string, with the details beside it in `json.details`). Undefined for a success item.
 */
export function itemError(item: INodeExecutionData | undefined): ItemError | undefined {
	const raw = item?.json.error;
	if (raw === undefined || raw === null) return undefined;
	if (typeof raw === 'object') {
		const e = raw as IDataObject;
		return {
			message: String(e.message),
			...(e.description !== undefined ? { description: String(e.description) } : {}),
			...(e.httpCode !== undefined ? { httpCode: String(e.httpCode) } : {}),
		};
	}
	const details = (item?.json.details ?? {}) as IDataObject;
	return {
		message: String(raw),
		...(details.description !== undefined ? { description: String(details.description) } : {}),
		...(details.httpCode !== undefined ? { httpCode: String(details.httpCode) } : {}),
	};
}

/** The item index an output item is paired with (fails the test when it is missing or not a single item). */
export function pairedIndex(item: INodeExecutionData): number {
	const paired = item.pairedItem;
	if (typeof paired === 'number') return paired;
	if (paired && !Array.isArray(paired) && typeof paired.item === 'number') return paired.item;
	throw new Error(`output item without a single pairedItem: ${JSON.stringify(item.pairedItem)}`);
}

export interface Accounting {
	/** item index → its success output */
	successes: Map<number, INodeExecutionData>;
	/** item index → its error output */
	errors: Map<number, INodeExecutionData>;
	/** Problems: duplicates, unknown indexes, missing items. Empty when every item is there exactly once. */
	problems: string[];
}

/** Sorts output items into successes and errors by pairedItem and checks each input shows up exactly once. */
export function account(outputs: INodeExecutionData[][], inputCount: number): Accounting {
	const successes = new Map<number, INodeExecutionData>();
	const errors = new Map<number, INodeExecutionData>();
	const problems: string[] = [];
	for (const item of outputs.flat()) {
		const index = pairedIndex(item);
		if (index < 0 || index >= inputCount)
			problems.push(`pairedItem ${index} is not an input index`);
		const isError = item.json.error !== undefined;
		const target = isError ? errors : successes;
		if (successes.has(index) || errors.has(index))
			problems.push(`item ${index} appears more than once`);
		target.set(index, item);
	}
	for (let i = 0; i < inputCount; i++) {
		if (!successes.has(i) && !errors.has(i)) problems.push(`item ${i} vanished`);
	}
	return { successes, errors, problems };
}

/** Lower-cased e-mail → ids of the customers the sandbox holds. */
export function customersByEmail(sandbox: Sandbox): Map<string, string[]> {
	const byEmail = new Map<string, string[]>();
	for (const c of sandbox.records().customers) {
		const key = c.email.toLowerCase();
		byEmail.set(key, [...(byEmail.get(key) ?? []), c.id]);
	}
	return byEmail;
}

/**
 * Waits until the sandbox has no create request in flight: a `slow` request the node gave up on (time-out)
 * is still carried out by the service afterwards, and must be in the records before they are checked.
 */
export async function settle(sandbox: Sandbox, maxMs = 10_000): Promise<void> {
	const until = Date.now() + maxMs;
	while (sandbox.stats().concurrency.current > 0) {
		if (Date.now() > until) throw new Error('the sandbox still has requests in flight');
		await sleep(50);
	}
}

/** Whole-run summary used in the assertions' failure messages and printed for the record. */
export function faultSummary(sandbox: Sandbox): string {
	const s = sandbox.stats();
	return `requests ${s.requests.total}, by status ${JSON.stringify(s.requests.byStatus)}, faults ${JSON.stringify(s.faults)}`;
}

export interface ProxyArrival {
	at: number;
	status: number;
}

export interface Proxy {
	baseUrl: string;
	arrivals: ProxyArrival[];
	close(): Promise<void>;
}

/**
 * A tiny reverse proxy in front of the sandbox that answers 503 (with `Retry-After: <seconds>`, or none when
 * `retryAfterSeconds` is undefined) to the create requests `fail(n)` picks (n = arrival number from 0), without
 * forwarding them, and passes everything else through. The sandbox has no 503 fault of its own.
 */
export async function start503Proxy(
	target: string,
	fail: (n: number) => boolean,
	retryAfterSeconds: number | undefined,
): Promise<Proxy> {
	const targetUrl = new URL(target);
	const arrivals: ProxyArrival[] = [];
	const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
	const server = http.createServer((req, res) => {
		const n = arrivals.length;
		const arrival: ProxyArrival = { at: Date.now(), status: 0 };
		arrivals.push(arrival);
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			if (fail(n)) {
				arrival.status = 503;
				res.writeHead(503, {
					'Content-Type': 'application/json',
					...(retryAfterSeconds !== undefined ? { 'Retry-After': String(retryAfterSeconds) } : {}),
				});
				res.end(
					JSON.stringify({ status: 'error', message: 'Service temporarily unavailable (proxy)' }),
				);
				return;
			}
			const upstream = http.request(
				{
					host: targetUrl.hostname,
					port: targetUrl.port,
					method: req.method,
					path: req.url,
					headers: req.headers,
					agent,
				},
				(up) => {
					arrival.status = up.statusCode ?? 0;
					res.writeHead(up.statusCode ?? 502, up.headers);
					up.pipe(res);
				},
			);
			upstream.on('error', () => res.destroy());
			upstream.end(Buffer.concat(chunks));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}`,
		arrivals,
		close: async () => {
			agent.destroy();
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
