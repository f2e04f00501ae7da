import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
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
}

/** Runs the Invoice Service node inside a real n8n-core workflow, after a source node that emits `items`. */
export async function runInvoiceService(run: InvoiceServiceRun): Promise<RunResult> {
	return await runNode({
		node: new InvoiceService(),
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
		...(run.asTool ? { nodeTypeName: 'n8n-nodes-invoice-service.invoiceServiceTool' } : {}),
	});
}

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
