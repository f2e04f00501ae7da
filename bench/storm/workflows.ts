// The storm workflows, one execution per event: Webhook (POST, answered by Respond to Webhook) →
// ours: Invoice Service Customer → Create → Invoice → Create (Download PDF) → respond;
// http: HTTP Request 4.2 create-customer → create-invoice → GET the PDF (as a file) → respond, each with
// Retry On Fail as a user would set it against a rate limit (5 tries, 1 s apart: the most n8n's editor offers
// is 5 tries, 5 s);
// noop: Webhook → respond (n8n's own cost of one execution: the floor);
// keyed: ours with an Idempotency Key (the event's id) on both nodes, their "Already Created" output answered.
import { createHash } from 'node:crypto';

import type { Sandbox } from '../../sandbox/server';
import { CREDENTIAL_TYPE, NODE_TYPE } from '../../tools/n8n';
import type { CredentialIds } from '../workflows';

export type StormKind = 'ours' | 'http' | 'noop' | 'keyed';

/** HTTP Request's Retry On Fail, as set in the http workflow. */
export const HTTP_RETRY = { maxTries: 5, waitBetweenTries: 1000 };

type Node = Record<string, unknown>;

/** What event i posts: a new customer (its own e-mail) and a one-line invoice. */
export function eventBody(tag: string, i: number): Record<string, unknown> {
	return {
		eventId: `${tag}-${i}`,
		firstName: 'Storm',
		lastName: `Event ${i}`,
		email: `storm.${tag}.${i}@example.com`,
		currency: 'EUR',
		lines: [{ description: 'Subscription', price: 19.99 }],
	};
}

/** The e-mail of event i (the sandbox's records are matched to events by it). */
export const eventEmail = (tag: string, i: number): string =>
	String(eventBody(tag, i).email).toLowerCase();

export const webhookPath = (id: string): string => `storm-${id}`;

const BODY = "$('Webhook').item.json.body";

function oursNodes(credentials: CredentialIds, keyed: boolean): Node[] {
	const cred = { [CREDENTIAL_TYPE]: { id: credentials.ours, name: credentials.ours } };
	// One key for both nodes: each has its own store (scope node), and the event's id is what a sender repeats.
	const key = keyed ? { idempotencyKey: `={{ ${BODY}.eventId }}` } : {};
	return [
		{
			name: 'Create customer',
			type: NODE_TYPE,
			typeVersion: 1,
			parameters: {
				resource: 'customer',
				operation: 'create',
				firstName: `={{ ${BODY}.firstName }}`,
				lastName: `={{ ${BODY}.lastName }}`,
				email: `={{ ${BODY}.email }}`,
				additionalFields: {},
				...(keyed ? { options: key } : {}),
			},
			credentials: cred,
		},
		{
			name: 'Create invoice',
			type: NODE_TYPE,
			typeVersion: 1,
			parameters: {
				resource: 'invoice',
				operation: 'create',
				customerId: '={{ $json.id }}',
				currency: `={{ ${BODY}.currency }}`,
				lineItemsMode: 'json',
				lineItemsJson: `={{ ${BODY}.lines }}`,
				amountMode: 'sum',
				options: { downloadPdf: true, ...key },
			},
			credentials: cred,
		},
	];
}

function httpNodes(sandbox: Sandbox, credentials: CredentialIds): Node[] {
	const request = (name: string, parameters: Record<string, unknown>): Node => ({
		name,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		retryOnFail: true,
		...HTTP_RETRY,
		parameters,
	});
	const post = (name: string, endpoint: string, body: string): Node => ({
		...request(name, {
			method: 'POST',
			url: `${sandbox.baseUrl}/${endpoint}`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody: `={{ JSON.stringify(${body}) }}`,
			options: {},
		}),
		credentials: { httpHeaderAuth: { id: credentials.header, name: credentials.header } },
	});
	return [
		post(
			'Create customer',
			'create-customer',
			`{ first_name: ${BODY}.firstName, last_name: ${BODY}.lastName, email: ${BODY}.email }`,
		),
		// The amount is the user's to compute here: the sum of the line prices.
		post(
			'Create invoice',
			'create-invoice',
			`{ customer_id: $json.id, currency: ${BODY}.currency, items: ${BODY}.lines, amount: ${BODY}.lines.reduce((sum, line) => sum + line.price, 0) }`,
		),
		// The PDF link needs no key.
		request('Download PDF', {
			method: 'GET',
			url: '={{ $json.download_url }}',
			options: { response: { response: { responseFormat: 'file' } } },
		}),
	];
}

/** A storm workflow of one kind; its production webhook is POST /webhook/storm-<id>. */
export function stormWorkflow(
	id: string,
	kind: StormKind,
	sandbox: Sandbox,
	credentials: CredentialIds,
): Record<string, unknown> {
	const middle =
		kind === 'ours' || kind === 'keyed'
			? oursNodes(credentials, kind === 'keyed')
			: kind === 'http'
				? httpNodes(sandbox, credentials)
				: [];
	const answer =
		kind === 'noop'
			? '={{ JSON.stringify({ ok: true }) }}'
			: "={{ JSON.stringify({ invoiceId: $('Create invoice').item.json.invoice_id }) }}";
	const chain: Node[] = [
		{
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			parameters: {
				httpMethod: 'POST',
				path: webhookPath(id),
				responseMode: 'responseNode',
				options: {},
			},
			webhookId: uuid(id, 0),
		},
		...middle,
		{
			name: 'Respond to Webhook',
			type: 'n8n-nodes-base.respondToWebhook',
			typeVersion: 1.1,
			parameters: { respondWith: 'json', responseBody: answer, options: {} },
		},
	];
	const nodes: Node[] = chain.map((node, n) => ({
		...node,
		id: uuid(id, n + 1),
		position: [n * 220, 0],
	}));
	const connections: Record<string, { main: unknown[][] }> = {};
	for (let n = 0; n + 1 < chain.length; n++) {
		connections[String(chain[n].name)] = {
			main: [[{ node: chain[n + 1].name, type: 'main', index: 0 }]],
		};
	}
	if (kind === 'keyed') {
		// A repeated event ends at either node's second output, "Already Created": answered as such.
		const already = 'Respond: already created';
		nodes.push({
			name: already,
			type: 'n8n-nodes-base.respondToWebhook',
			typeVersion: 1.1,
			parameters: {
				respondWith: 'json',
				responseBody: '={{ JSON.stringify({ alreadyCreated: true, key: $json.idempotencyKey }) }}',
				options: {},
			},
			id: uuid(id, chain.length + 1),
			position: [3 * 220, 200],
		});
		for (const name of middle.map((node) => String(node.name)))
			connections[name].main.push([{ node: already, type: 'main', index: 0 }]);
	}
	return { id, name: `storm ${id}`, nodes, connections, settings: { executionOrder: 'v1' } };
}

/** A stable UUID per workflow and node (n8n wants UUIDs for node ids and webhook ids). */
function uuid(id: string, n: number): string {
	const hex = createHash('sha256').update(id).digest('hex');
	return `5707a000-${hex.slice(0, 4)}-4000-8000-${hex.slice(4, 14)}${n.toString(16).padStart(2, '0')}`;
}
