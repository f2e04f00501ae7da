import nock from 'nock';
import type { IDataObject, IExecuteFunctions, INodeParameters } from 'n8n-workflow';

import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { router } from '../../nodes/InvoiceService/actions/router';
import type { KeysProcess } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { runNode, type OnError, type RunResult } from './harness/run-node';

export const ORIGIN = 'https://app.example.com';
export const API = '/api/1.1/wf';
/** Short on purpose: the lint forbids token-looking literals. Every test checks it never leaks. */
export const API_KEY = 'test-key-42';

export interface InvoiceServiceRun {
	parameters: INodeParameters;
	items?: IDataObject[];
	onError?: OnError;
	credentials?: IDataObject;
	/** n8n's node settings for Retry On Fail. */
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	executeOnce?: boolean;
	/** Run as the AI tool variant n8n generates (`…invoiceServiceTool`). */
	asTool?: boolean;
	/** The same node id in several runs: the same node of one workflow (its Idempotency Keys). */
	nodeId?: string;
	/** Stop the execution when this settles (the editor's Stop, the workflow's time-out). */
	cancelWhen?: Promise<unknown>;
	/** The process the node's Idempotency Keys run in (its clock and timings): n8n's own by default. */
	keys?: KeysProcess;
}

/** The node, its Idempotency Keys in `keys` (a process of the test's, with its clock and timings). */
function nodeWithKeys(keys: KeysProcess): InvoiceService {
	return Object.assign(new InvoiceService(), {
		async execute(this: IExecuteFunctions) {
			return await router.call(this, keys);
		},
	});
}

/** Runs the Invoice Service node inside a real n8n-core workflow, after a source node that emits `items`. */
export async function runInvoiceService(run: InvoiceServiceRun): Promise<RunResult> {
	return await runNode({
		node: run.keys ? nodeWithKeys(run.keys) : new InvoiceService(),
		credentialType: new InvoiceServiceApi(),
		credentials: { baseUrl: ORIGIN, apiKey: API_KEY, allowHttp: false, ...run.credentials },
		parameters: run.parameters,
		items: run.items ?? [{}],
		onError: run.onError,
		retryOnFail: run.retryOnFail,
		maxTries: run.maxTries,
		waitBetweenTries: run.waitBetweenTries,
		executeOnce: run.executeOnce,
		nodeId: run.nodeId,
		cancelWhen: run.cancelWhen,
		...(run.asTool ? { nodeTypeName: 'n8n-nodes-invoice-service.invoiceServiceTool' } : {}),
	});
}

/** `count` customers, each an event of its own (`eventId`, the usual Idempotency Key), matched by e-mail. */
export const people = (count: number) =>
	Array.from({ length: count }, (_, index) => ({
		first: 'Ada',
		last: `Lovelace ${index}`,
		email: `ada${index}@example.com`,
		eventId: `event-${index}`,
	}));

export const customerParameters = (extra: INodeParameters = {}): INodeParameters => ({
	resource: 'customer',
	operation: 'create',
	firstName: '={{ $json.first }}',
	lastName: '={{ $json.last }}',
	email: '={{ $json.email }}',
	...extra,
});

export const invoiceParameters = (extra: INodeParameters = {}): INodeParameters => ({
	resource: 'invoice',
	operation: 'create',
	customerId: 'cust_7',
	currency: 'EUR',
	lineItemsMode: 'fields',
	lineItems: {
		item: [
			{ description: 'Consulting', price: 100.1 },
			{ description: 'Travel', price: 0.2 },
		],
	},
	...extra,
});

/**
 * Two invoices, for customers cust_1 and cust_2: the second is refused once (HTTP 400, so the run stops after
 * the first was created), then created; every PDF is served. `invoices()` counts the create requests, so a
 * second create of the first shows; `files` is done when `pdfs` downloads happened.
 */
export function invoiceRefusedOncePdfServed(pdfs: number) {
	let invoices = 0;
	nock(ORIGIN)
		.post(`${API}/create-invoice`)
		.times(3)
		.reply((_uri, body) => {
			if ((body as IDataObject).customer_id === 'cust_2' && invoices === 1) {
				invoices++;
				return [400, { status: 'error', message: 'try again' }];
			}
			invoices++;
			const id = `inv_${invoices}`;
			return [200, { invoice_id: id, status: 'sent', download_url: `${ORIGIN}/files/${id}.pdf` }];
		});
	const pdf = Buffer.from('%PDF-1.4 the first invoice');
	const files = nock(ORIGIN)
		.get(/\/files\/inv_\d\.pdf/)
		.times(pdfs)
		.reply(200, pdf, { 'content-type': 'application/pdf' });
	const run = (extra: Omit<InvoiceServiceRun, 'parameters' | 'items'> = {}) =>
		runInvoiceService({
			parameters: invoiceParameters({
				customerId: '={{ $json.customer }}',
				options: { downloadPdf: true, concurrency: 1 },
			}),
			items: [{ customer: 'cust_1' }, { customer: 'cust_2' }],
			...extra,
		});
	return { invoices: () => invoices, files, pdf, run };
}

/** Everything a run produced, as text, to prove the API key appears nowhere. */
export function everythingVisible(result: RunResult): string {
	const error = result.error;
	return JSON.stringify({
		runData: result.runData,
		outputs: result.outputs,
		error: error
			? {
					...error,
					message: error.message,
					description: error.description,
					stack: error.stack,
					cause: error.cause,
				}
			: null,
	});
}
