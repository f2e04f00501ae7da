import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';

import nock from 'nock';
import type { IDataObject } from 'n8n-workflow';

import { REPO_ROOT } from '../../tools/n8n';
import { SOURCE_NODE_NAME } from '../support/harness/run-node';
import { API, ORIGIN, customerParameters, runInvoiceService } from '../support/invoice-service';

// Every Idempotency Key a user is shown must give a key in the workflow it is shown for: a key that gives nothing
// fails its item (the check is never off unseen), so an example whose key is blank would fail every event. Each
// key runs in the node's real execute() in n8n-core, on the item its workflow gives it: the README's and the
// docs' keys after a Webhook trigger (where the event is under `body`), the examples' keys on the data their
// workflow pins for the keyed node's input (a Webhook's sample event: pin it so that the key can be checked).

afterEach(() => nock.cleanAll());

const NODE_TYPE = 'n8n-nodes-invoice-service.invoiceService';

/** The item n8n's Webhook node (v2) gives for a POST of `body`. */
const webhookItem = (body: IDataObject): IDataObject => ({
	headers: { host: 'localhost:5678', 'content-type': 'application/json' },
	params: {},
	query: {},
	body,
	webhookUrl: 'http://localhost:5678/webhook/invoice-events',
	executionMode: 'production',
});
const EVENT = {
	eventId: 'evt_1001',
	id: 'evt_1001',
	email: 'ada@example.com',
	customerId: 'cust_1',
};

/**
 * What the key `expression` (as written in the editor: `{{ … }}`, or `={{ … }}`) gives for `item`, the node's
 * one input item, in a real run: the error message of a key refused, or undefined when it gave a key. `$('<node>')`
 * references to `trigger` read the item too (the harness's source node stands in for that node).
 */
async function keyProblem(
	expression: string,
	item: IDataObject,
	trigger = 'Webhook',
): Promise<string | undefined> {
	nock(ORIGIN).post(`${API}/create-customer`).reply(200, { id: 'cust_9', name: 'Ada Lovelace' });
	const key = (expression.startsWith('=') ? expression : `=${expression}`)
		.split(`$('${trigger}')`)
		.join(`$('${SOURCE_NODE_NAME}')`)
		.split(`$("${trigger}")`)
		.join(`$('${SOURCE_NODE_NAME}')`);
	const run = await runInvoiceService({
		parameters: customerParameters({
			firstName: 'Ada',
			lastName: 'Lovelace',
			email: 'ada@example.com',
			options: { idempotencyKey: key },
		}),
		items: [item],
		nodeId: randomUUID(),
		onError: 'continueRegularOutput',
	});
	const error = run.outputs[0][0]?.json.error as IDataObject | undefined;
	return error ? String(error.message) : undefined;
}

/**
 * Each `{{ … }}` in backticks that `page` gives as an Idempotency Key: within a few words after the option's name
 * ("Idempotency Key | (empty) | per item, e.g. `{{ … }}`", "Options → *Idempotency Key*, e.g. `{{ … }}`").
 */
function quotedKeys(page: string): Array<[string, string]> {
	const text = fs.readFileSync(path.join(REPO_ROOT, page), 'utf8').replace(/\s+/g, ' ');
	return [...text.matchAll(/Idempotency Key[^`]{0,60}`(\{\{[^`]*\}\})`/gi)].map(([, key]) => [
		page,
		key,
	]);
}
const PAGES = [
	'README.md',
	...fs
		.readdirSync(path.join(REPO_ROOT, 'docs'))
		.filter((name) => name.endsWith('.md'))
		.map((name) => `docs/${name}`),
];
const DOC_KEYS = PAGES.flatMap(quotedKeys);

describe('the Idempotency Keys the README and docs show, after a Webhook trigger', () => {
	it('the README shows one', () => {
		expect(DOC_KEYS.filter(([page]) => page === 'README.md').length).toBeGreaterThan(0);
	});

	it.each(DOC_KEYS)('%s: %s gives a key for the event a Webhook received', async (_page, key) => {
		expect(await keyProblem(key, webhookItem(EVENT))).toBeUndefined();
	});

	it('this check fails a key that is blank after a Webhook (the event is under body)', async () => {
		expect(await keyProblem('{{ $json.eventId }}', webhookItem(EVENT))).toMatch(
			/^Item 0: Idempotency Key is blank: the expression \{\{ \$json\.eventId \}\} gave nothing/,
		);
		expect(
			await keyProblem("{{ $('Webhook').item.json.body.eventId }}", webhookItem(EVENT)),
		).toBeUndefined();
	});
});

interface WorkflowFile {
	nodes: Array<{ name: string; type: string; parameters: IDataObject }>;
	connections: Record<string, { main?: Array<Array<{ node: string }> | null> }>;
	pinData?: Record<string, Array<{ json: IDataObject }>>;
}

/**
 * The problems of a workflow's Idempotency Keys: for each keyed Invoice Service node, the key run on each item its
 * input node pins (the node right before it, or the node its key names with `$('…')`).
 */
async function examplesKeyProblems(name: string, workflow: WorkflowFile): Promise<string[]> {
	const problems: string[] = [];
	const parentsOf = (node: string) =>
		Object.entries(workflow.connections)
			.filter(([, { main }]) =>
				(main ?? []).some((targets) => (targets ?? []).some((to) => to.node === node)),
			)
			.map(([from]) => from);
	for (const node of workflow.nodes.filter((one) => one.type === NODE_TYPE)) {
		const key = (node.parameters.options as IDataObject | undefined)?.idempotencyKey;
		if (key === undefined) continue;
		const named = /\$\(['"]([^'"]+)['"]\)/.exec(String(key))?.[1];
		const [parent] = parentsOf(node.name);
		const input = named ?? parent;
		const pinned = workflow.pinData?.[input];
		if (!pinned || (named && /\$json/.test(String(key)))) {
			problems.push(
				`${name}, node "${node.name}": its key ${String(key)} cannot be checked: pin the sample data of "${input}" (the node its key reads)`,
			);
			continue;
		}
		for (const item of pinned) {
			const problem = await keyProblem(String(key), item.json, input);
			if (problem) problems.push(`${name}, node "${node.name}": ${problem}`);
		}
	}
	return problems;
}

describe('the Idempotency Keys of examples/, in the workflow they sit in', () => {
	const examples = fs
		.readdirSync(path.join(REPO_ROOT, 'examples'))
		.filter((file) => file.endsWith('.json'));

	it.each(examples)('%s: every key gives a key for its sample input', async (file) => {
		const workflow = JSON.parse(
			fs.readFileSync(path.join(REPO_ROOT, 'examples', file), 'utf8'),
		) as WorkflowFile;
		expect(await examplesKeyProblems(file, workflow)).toEqual([]);
	});

	it("this check fails an example whose key is blank for its Webhook's pinned event, or has no pinned event", async () => {
		const keyed = (idempotencyKey: string, pinned: boolean): WorkflowFile => ({
			nodes: [
				{ name: 'Webhook', type: 'n8n-nodes-base.webhook', parameters: {} },
				{ name: 'Create customer', type: NODE_TYPE, parameters: { options: { idempotencyKey } } },
			],
			connections: { Webhook: { main: [[{ node: 'Create customer' }]] } },
			...(pinned ? { pinData: { Webhook: [{ json: webhookItem(EVENT) }] } } : {}),
		});
		expect(await examplesKeyProblems('blank', keyed('={{ $json.eventId }}', true))).toEqual([
			expect.stringMatching(/^blank, node "Create customer": Item 0: Idempotency Key is blank: /),
		]);
		expect(
			await examplesKeyProblems('unpinned', keyed('={{ $json.body.eventId }}', false)),
		).toEqual([expect.stringMatching(/cannot be checked: pin the sample data of "Webhook"/)]);
		expect(await examplesKeyProblems('right', keyed('={{ $json.body.eventId }}', true))).toEqual(
			[],
		);
		expect(
			await examplesKeyProblems('named', keyed("={{ $('Webhook').item.json.body.eventId }}", true)),
		).toEqual([]);
	});
});
