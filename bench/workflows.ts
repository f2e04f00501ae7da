// Workflow builders: every bench workflow is Manual Trigger → Edit Fields (an expression makes the people) →
// Split Out → the node(s) measured, with "On Error: Continue" so that every failure is an item.
import type { Sandbox } from '../sandbox/server';
import { CREDENTIAL_TYPE, NODE_TYPE, type CredentialImport } from '../tools/n8n';
import { FLOOR_NODE_TYPE } from './floor/install';

export const TARGET = 'Target';
export const LOOP = 'Loop Over Items';
export const SPLIT = 'Split Out';

/** ours: Invoice Service; floor: bench/floor; http*: HTTP Request 4.2; baseline: only makes the items. */
export type Kind =
	| 'ours'
	| 'ours-keyed'
	| 'floor'
	| 'http'
	| 'http-batching'
	| 'http-loop'
	| 'baseline';

type Node = Record<string, unknown>;
export type Workflow = Record<string, unknown> & { id: string; nodes: Node[] };

/** The credential ids a workflow refers to (imported once, see credentialsFor). */
export interface CredentialIds {
	ours: string;
	header: string;
}

/** One thing the bench measures: a workflow of one kind over a number of items against one sandbox. */
export interface Scenario {
	/** Workflow id in n8n (at most 16 characters); also what --only selects. */
	id: string;
	group: 'P1' | 'P2' | 'P4';
	label: string;
	kind: Kind;
	items: number;
	sandbox: Sandbox;
	/** The Concurrency option of ours and the floor, if set. */
	concurrency?: number;
}

function makeItemsNodes(prefix: string, count: number): Node[] {
	return [
		{
			id: `${prefix}-trigger`,
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: `${prefix}-make`,
			name: 'Make items',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 0],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{
							id: `${prefix}-a1`,
							name: 'people',
							type: 'array',
							value: `={{ Array.from({ length: ${count} }, (_, i) => ({ first: 'First' + i, last: 'Last' + i, email: '${prefix}.' + i + '@example.com' })) }}`,
						},
					],
				},
				options: {},
			},
		},
		{
			id: `${prefix}-split`,
			name: SPLIT,
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [400, 0],
			parameters: { fieldToSplitOut: 'people', options: {} },
		},
	];
}

/**
 * Ours and the floor read the same parameters; only the node type differs. Keyed: ours with an Idempotency Key
 * per item (its e-mail, unique), for the key's cost beside the same node without one.
 */
function customerCreateNode(
	spec: Scenario,
	credentials: CredentialIds,
	type: string,
	keyed = false,
): Node {
	return {
		id: `${spec.id}-target`,
		name: TARGET,
		type,
		typeVersion: 1,
		position: [600, 0],
		onError: 'continueRegularOutput',
		parameters: {
			resource: 'customer',
			operation: 'create',
			firstName: '={{ $json.first }}',
			lastName: '={{ $json.last }}',
			email: '={{ $json.email }}',
			additionalFields: {},
			options: {
				...(spec.concurrency ? { concurrency: spec.concurrency } : {}),
				...(keyed ? { idempotencyKey: '={{ $json.email }}' } : {}),
			},
		},
		credentials: { [CREDENTIAL_TYPE]: { id: credentials.ours, name: credentials.ours } },
	};
}

function httpNode(
	spec: Scenario,
	credentials: CredentialIds,
	options: Record<string, unknown>,
): Node {
	return {
		id: `${spec.id}-target`,
		name: TARGET,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [600, 0],
		onError: 'continueRegularOutput',
		parameters: {
			method: 'POST',
			url: `${spec.sandbox.baseUrl}/create-customer`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody:
				'={{ JSON.stringify({ first_name: $json.first, last_name: $json.last, email: $json.email }) }}',
			options,
		},
		credentials: {
			httpHeaderAuth: { id: credentials.header, name: credentials.header },
		},
	};
}

function chain(names: string[]): Record<string, unknown> {
	const connections: Record<string, unknown> = {};
	for (let i = 0; i + 1 < names.length; i++) {
		connections[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	}
	return connections;
}

const BASE_CHAIN = ['Start', 'Make items', SPLIT];

function withTarget(spec: Scenario, target: Node): Workflow {
	return workflow(
		spec,
		[...makeItemsNodes(spec.id, spec.items), target],
		chain([...BASE_CHAIN, TARGET]),
	);
}

function workflow(spec: Scenario, nodes: Node[], connections: Record<string, unknown>): Workflow {
	return {
		id: spec.id,
		name: `bench ${spec.id}`,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
	};
}

/** Loop Over Items (Split in Batches v3, batch size 1) around HTTP Request: output 0 "done", output 1 "loop". */
function loopWorkflow(spec: Scenario, credentials: CredentialIds): Workflow {
	const loop: Node = {
		id: `${spec.id}-loop`,
		name: LOOP,
		type: 'n8n-nodes-base.splitInBatches',
		typeVersion: 3,
		position: [600, 0],
		parameters: { batchSize: 1, options: {} },
	};
	const http = { ...httpNode(spec, credentials, {}), position: [800, 100] };
	const connections = chain(BASE_CHAIN);
	connections[SPLIT] = { main: [[{ node: LOOP, type: 'main', index: 0 }]] };
	connections[LOOP] = { main: [[], [{ node: TARGET, type: 'main', index: 0 }]] };
	connections[TARGET] = { main: [[{ node: LOOP, type: 'main', index: 0 }]] };
	return workflow(spec, [...makeItemsNodes(spec.id, spec.items), loop, http], connections);
}

export function buildWorkflow(spec: Scenario, credentials: CredentialIds): Workflow {
	switch (spec.kind) {
		case 'baseline':
			return workflow(spec, makeItemsNodes(spec.id, spec.items), chain(BASE_CHAIN));
		case 'ours':
			return withTarget(spec, customerCreateNode(spec, credentials, NODE_TYPE));
		case 'ours-keyed':
			return withTarget(spec, customerCreateNode(spec, credentials, NODE_TYPE, true));
		case 'floor':
			return withTarget(spec, customerCreateNode(spec, credentials, FLOOR_NODE_TYPE));
		case 'http':
			return withTarget(spec, httpNode(spec, credentials, {}));
		case 'http-batching':
			return withTarget(
				spec,
				httpNode(spec, credentials, { batching: { batch: { batchSize: 10, batchInterval: 200 } } }),
			);
		case 'http-loop':
			return loopWorkflow(spec, credentials);
	}
}

/** The node(s) whose run data time a scenario (for the loop: the loop and the request inside it). */
export function measuredNodes(kind: Kind): { outputNode: string; timedNodes: string[] } {
	if (kind === 'baseline') return { outputNode: SPLIT, timedNodes: [SPLIT] };
	if (kind === 'http-loop') return { outputNode: TARGET, timedNodes: [LOOP, TARGET] };
	return { outputNode: TARGET, timedNodes: [TARGET] };
}

/** One Invoice Service credential (ours and the floor) and one Header Auth credential per sandbox. */
export function credentialsFor(sandboxes: Sandbox[]): {
	imports: CredentialImport[];
	ids: CredentialIds[];
} {
	const ids = sandboxes.map((_, i) => ({
		ours: `credOurs0000000${i + 1}`,
		header: `credHead0000000${i + 1}`,
	}));
	const imports = sandboxes.flatMap((sandbox, i) => [
		{
			id: ids[i].ours,
			name: ids[i].ours,
			type: CREDENTIAL_TYPE,
			data: { baseUrl: sandbox.rootUrl, apiKey: sandbox.apiKey, allowHttp: true },
		},
		{
			id: ids[i].header,
			name: ids[i].header,
			type: 'httpHeaderAuth',
			data: { name: 'Authorization', value: `Bearer ${sandbox.apiKey}` },
		},
	]);
	return { imports, ids };
}
