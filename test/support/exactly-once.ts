// The exactly-once scenarios shared by the real-n8n suites (test/e2e/exactly-once.test.ts, regular mode, and
// test/e2e-scale/queue-mode.test.ts): the workflows (production webhooks into the Invoice Service node), the
// invoice lines they carry, and how to read the sandbox's invoices and n8n's saved executions for them.
import type { OneShotFault, Sandbox } from '../../sandbox/server';
import { CREDENTIAL_TYPE, NODE_TYPE, nodeOutput, nodeRuns, type N8nServer } from '../../tools/n8n';
import {
	executionsStartedBy,
	postWebhook,
	retryExecution,
	type SavedExecution,
} from './executions';

export const INVOICE = 'Create invoice';
export const CUSTOMER = 'Create customer';
/** Lines per retried execution, and the one the service fails (1-based, so item index 6). */
export const LINES = 12;
export const FAILING_LINE = 7;

type Credential = { id: string; name: string };

const node = (
	tag: number,
	index: number,
	name: string,
	type: string,
	typeVersion: number,
	parameters: Record<string, unknown>,
	extra: Record<string, unknown> = {},
) => ({
	id: `e0e0e0e0-000${tag}-4000-8000-00000000000${index}`,
	name,
	type,
	typeVersion,
	position: [index * 220, 0],
	parameters,
	...extra,
});

/** A production webhook (POST /webhook/<path>), answering at once ("Workflow was started"). */
const webhook = (tag: number, path: string) =>
	node(
		tag,
		1,
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		{ httpMethod: 'POST', path, options: {} },
		{ webhookId: `e0e0e0e0-000${tag}-4000-8000-0000000000a1` },
	);

const service = (
	tag: number,
	index: number,
	name: string,
	credential: Credential,
	parameters: Record<string, unknown>,
) =>
	node(tag, index, name, NODE_TYPE, 1, parameters, {
		credentials: { [CREDENTIAL_TYPE]: credential },
	});

const noOp = (tag: number, index: number, name: string) =>
	node(tag, index, name, 'n8n-nodes-base.noOp', 1, {});

/** An Invoice → Create node: EUR, the lines as JSON (an expression), the amount their sum. */
const invoiceNode = (
	tag: number,
	index: number,
	credential: Credential,
	{
		customerId,
		lineItemsJson,
		options,
	}: { customerId: string; lineItemsJson: string; options: object },
) =>
	service(tag, index, INVOICE, credential, {
		resource: 'invoice',
		operation: 'create',
		customerId,
		currency: 'EUR',
		lineItemsMode: 'json',
		lineItemsJson,
		amountMode: 'sum',
		options,
	});

const to = (name: string) => [{ node: name, type: 'main', index: 0 }];

/**
 * Webhook (body `{ customerId, lines: [{ description, price }] }`) → Split Out (one item per line) → Invoice →
 * Create, one invoice per line with its PDF, Stop Workflow on error (n8n's default).
 */
export function linesWorkflow(credential: Credential, path: string, tag = 1) {
	return {
		name: `Lines ${path}`,
		nodes: [
			webhook(tag, path),
			node(tag, 2, 'Lines', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'body.lines' }),
			invoiceNode(tag, 3, credential, {
				customerId: "={{ $('Webhook').item.json.body.customerId }}",
				lineItemsJson: '={{ [{ description: $json.description, price: $json.price }] }}',
				options: { downloadPdf: true },
			}),
		],
		connections: { Webhook: { main: [to('Lines')] }, Lines: { main: [to(INVOICE)] } },
	};
}

/**
 * Webhook (body `{ eventId, customerId, description, price }`) → Invoice → Create keyed by the event
 * (`{{ $json.body.eventId }}`): "Created" and "Already created" after its two outputs. `options` adds to the
 * invoice node's options (e.g. a shorter Timeout).
 */
export function eventWorkflow(
	credential: Credential,
	path: string,
	tag = 2,
	options: Record<string, unknown> = {},
) {
	return {
		name: `Event ${path}`,
		nodes: [
			webhook(tag, path),
			invoiceNode(tag, 2, credential, {
				customerId: '={{ $json.body.customerId }}',
				lineItemsJson: '={{ [{ description: $json.body.description, price: $json.body.price }] }}',
				options: { idempotencyKey: '={{ $json.body.eventId }}', ...options },
			}),
			noOp(tag, 3, 'Created'),
			noOp(tag, 4, 'Already created'),
		],
		connections: {
			Webhook: { main: [to(INVOICE)] },
			[INVOICE]: { main: [to('Created'), to('Already created')] },
		},
	};
}

/**
 * The event workflow keyed by `{{ $json.eventId }}`, a key that is blank after a Webhook (the event is under
 * `body`), with On Error: Continue (using error output): each item leaves by the error output, to "Key refused".
 */
export function blankKeyWorkflow(credential: Credential, path: string, tag = 7) {
	const workflow = eventWorkflow(credential, path, tag, { idempotencyKey: '={{ $json.eventId }}' });
	const nodes = workflow.nodes.map((one) =>
		one.name === INVOICE ? { ...one, onError: 'continueErrorOutput' } : one,
	);
	return {
		...workflow,
		nodes: [...nodes, noOp(tag, 5, 'Key refused')],
		connections: {
			...workflow.connections,
			[INVOICE]: { main: [to('Created'), to('Already created'), to('Key refused')] },
		},
	};
}

/**
 * Webhook (body `{ eventId, email, description, price }`) → Customer → Create → Invoice → Create, both keyed by
 * the event: the README's shape for a chain. The customer's "Already created" output goes to a No Op.
 */
export function chainWorkflow(credential: Credential, path: string, tag = 3) {
	return {
		name: `Chain ${path}`,
		nodes: [
			webhook(tag, path),
			service(tag, 2, CUSTOMER, credential, {
				resource: 'customer',
				operation: 'create',
				firstName: 'Event',
				lastName: '={{ $json.body.eventId }}',
				email: '={{ $json.body.email }}',
				options: { idempotencyKey: '={{ $json.body.eventId }}' },
			}),
			invoiceNode(tag, 3, credential, {
				customerId: '={{ $json.id }}',
				lineItemsJson:
					"={{ [{ description: $('Webhook').item.json.body.description, price: $('Webhook').item.json.body.price }] }}",
				options: { idempotencyKey: "={{ $('Webhook').item.json.body.eventId }}" },
			}),
			noOp(tag, 4, 'Customer already created'),
			noOp(tag, 5, 'Created'),
			noOp(tag, 6, 'Invoice already created'),
		],
		connections: {
			Webhook: { main: [to(CUSTOMER)] },
			[CUSTOMER]: { main: [to(INVOICE), to('Customer already created')] },
			[INVOICE]: { main: [to('Created'), to('Invoice already created')] },
		},
	};
}

/** The description of line `n` (1-based) of a batch: unique across the suite, so the sandbox can count it. */
export const lineDescription = (batch: string, n: number) => `Line ${n} of ${batch}`;

/** The webhook body of a batch of LINES lines for one customer. */
export function linesBody(batch: string, customerId: string) {
	return {
		customerId,
		lines: Array.from({ length: LINES }, (_, index) => ({
			description: lineDescription(batch, index + 1),
			price: 10 + index,
		})),
	};
}

/** Text only this line's create request contains (its JSON), for the sandbox's faultOnce. */
export const lineRequestText = (description: string) => `"description":"${description}"`;

/** Creates a customer directly at the service (the invoices' owner), and returns its id. */
export async function serviceCustomer(sandbox: Sandbox, email: string): Promise<string> {
	const res = await fetch(`${sandbox.baseUrl}/create-customer`, {
		method: 'POST',
		headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
		body: JSON.stringify({ first_name: 'Exactly', last_name: 'Once', email }),
	});
	const body = (await res.json()) as { response?: { id?: string }; id?: string };
	const id = body.response?.id ?? body.id;
	if (res.status !== 200 || !id) throw new Error(`creating ${email}: HTTP ${res.status}`);
	return id;
}

/** The sandbox's invoices whose (only) line has this description. */
export function invoicesFor(sandbox: Sandbox, description: string) {
	return sandbox
		.records()
		.invoices.filter((invoice) => invoice.items[0]?.description === description);
}

/** How many invoices the service holds for each line of a batch, line 1 first. */
export const invoicesPerLine = (sandbox: Sandbox, batch: string) =>
	Array.from(
		{ length: LINES },
		(_, index) => invoicesFor(sandbox, lineDescription(batch, index + 1)).length,
	);

/** The hints n8n shows under a node's output in a saved execution, one text. */
export const hintsOf = (execution: SavedExecution, nodeName: string) =>
	(nodeRuns(execution.run, nodeName)[0]?.hints ?? []).map((hint) => hint.message).join('\n');

/**
 * Each output item of the invoice node, as `[pairedItem index, the description of the invoice it names, the
 * PDF's file name]`: item i must name the invoice of line i + 1, with that invoice's PDF.
 */
export function invoiceOutputs(sandbox: Sandbox, execution: SavedExecution) {
	const invoices = sandbox.records().invoices;
	return nodeOutput(execution.run, INVOICE, 0).map((item) => {
		const invoice = invoices.find((record) => record.id === item.json.invoice_id);
		return [
			(item.pairedItem as { item?: number } | undefined)?.item,
			invoice?.items[0]?.description,
			item.binary?.data?.fileName,
		];
	});
}

/** What invoiceOutputs must be for a whole batch: item i ↔ line i + 1, with its own PDF. */
export function expectedOutputs(sandbox: Sandbox, batch: string) {
	return Array.from({ length: LINES }, (_, index) => {
		const description = lineDescription(batch, index + 1);
		const [invoice] = invoicesFor(sandbox, description);
		return [index, description, `${invoice?.id}.pdf`];
	});
}

/** The error message of the invoice node in a saved execution. */
export const invoiceError = (execution: SavedExecution) =>
	String(nodeRuns(execution.run, INVOICE)[0]?.error?.message ?? '');

/**
 * The resend codes the invoice node's error in a saved execution gives its unknown outcomes ("enter <code> in
 * Options → Resend Unknown Outcomes Of"), each once, in order.
 */
export const resendCodesOf = (execution: SavedExecution) => [
	...new Set(
		[
			...String(nodeRuns(execution.run, INVOICE)[0]?.error?.description ?? '').matchAll(
				/enter ([2-9A-Z]{8}) in Options → Resend Unknown Outcomes Of/g,
			),
		].map((match) => match[1]),
	),
];

/** A published lines workflow and what its batches need. */
export interface LinesSetup {
	sandbox: Sandbox;
	workflowId: string;
	path: string;
	/** The customer every batch invoices. */
	customerId: string;
}

/** Posts a batch of LINES lines whose line 7 fails once with `fault`; returns the execution once finished. */
export async function failedBatch(
	server: N8nServer,
	setup: LinesSetup,
	batch: string,
	fault: OneShotFault,
): Promise<SavedExecution> {
	const description = lineDescription(batch, FAILING_LINE);
	setup.sandbox.faultOnce({ bodyContains: lineRequestText(description), fault });
	const [failed] = await executionsStartedBy(server, setup.workflowId, () =>
		postWebhook(server, setup.path, linesBody(batch, setup.customerId)),
	);
	return failed;
}

/** Retries a failed batch; returns the retry and the invoices per line before and after it. */
export async function retryBatch(
	server: N8nServer,
	sandbox: Sandbox,
	batch: string,
	failed: SavedExecution,
	loadWorkflow: boolean,
): Promise<{ before: number[]; after: number[]; retried: SavedExecution }> {
	const before = invoicesPerLine(sandbox, batch);
	const retried = await retryExecution(server, failed.id, loadWorkflow);
	return { before, after: invoicesPerLine(sandbox, batch), retried };
}

/**
 * What a completed retry of a batch must show: line 7 had no invoice before it, every line has exactly one after
 * it; the retry succeeded as a retry of the failed execution; item i names line i + 1's invoice with its PDF; and
 * the hint counts the items returned without sending (those created before the failure).
 */
export function expectRetryCompleted(
	sandbox: Sandbox,
	batch: string,
	failed: SavedExecution,
	{ before, after, retried }: Awaited<ReturnType<typeof retryBatch>>,
): void {
	expect(before[FAILING_LINE - 1]).toBe(0);
	expect(after).toEqual(Array.from({ length: LINES }, () => 1));
	expect(retried).toMatchObject({ status: 'success', mode: 'retry', retryOf: failed.id });
	expect(invoiceOutputs(sandbox, retried)).toEqual(expectedOutputs(sandbox, batch));
	const returned = before.filter((count) => count === 1).length;
	expect(hintsOf(retried, INVOICE)).toContain(
		`${returned} item(s) were created in an earlier try of this node (Retry On Fail or Retry of the failed execution)`,
	);
}
