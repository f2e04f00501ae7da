// A workflow for the real-n8n tests: Manual trigger → a Set node emitting `customers` → Split Out (one item
// each) → Invoice Service (Customer → Create, its error output wired) → "Created" / "After the error", which
// reads the failing item's own input and error through paired items.
import { CREDENTIAL_TYPE, NODE_TYPE } from '../../tools/n8n';

export const PREPARE = 'Prepare customers';
export const SERVICE = 'Invoice Service';
export const AFTER_ERROR = 'After the error';

const node = (name: string, type: string, typeVersion: number, parameters: object, x: number) => ({
	id: `${name.replace(/\W/g, '-').toLowerCase()}-0000-4000-8000-000000000000`.slice(0, 36),
	name,
	type,
	typeVersion,
	position: [x, 0],
	parameters,
});

/** n8n's own node settings on the Invoice Service node (Settings tab). */
export interface NodeSettings {
	onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	executeOnce?: boolean;
}

export function customerWorkflow(
	id: string,
	credentialId: string,
	customers: Array<Record<string, string>>,
	options: Record<string, unknown>,
	settings: NodeSettings = { onError: 'continueErrorOutput' },
) {
	const service = {
		...node(
			SERVICE,
			NODE_TYPE,
			1,
			{
				resource: 'customer',
				operation: 'create',
				firstName: '={{ $json.first }}',
				lastName: '={{ $json.last }}',
				email: '={{ $json.email }}',
				options,
			},
			660,
		),
		credentials: { [CREDENTIAL_TYPE]: { id: credentialId, name: credentialId } },
		...settings,
	};
	return {
		id,
		name: id,
		nodes: [
			node('Start', 'n8n-nodes-base.manualTrigger', 1, {}, 0),
			node(
				'Customers',
				'n8n-nodes-base.set',
				3.4,
				{ mode: 'raw', jsonOutput: JSON.stringify({ customers }), options: {} },
				220,
			),
			node(PREPARE, 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'customers' }, 440),
			service,
			node('Created', 'n8n-nodes-base.noOp', 1, {}, 900),
			node(
				AFTER_ERROR,
				'n8n-nodes-base.set',
				3.4,
				{
					mode: 'manual',
					assignments: {
						assignments: [
							{
								id: 'a1',
								name: 'inputEmail',
								type: 'string',
								value: `={{ $('${PREPARE}').item.json.email }}`,
							},
							{
								id: 'a2',
								name: 'serviceError',
								type: 'string',
								value: `={{ $('${SERVICE}').item.json.error.message }}`,
							},
						],
					},
					options: {},
				},
				900,
			),
		],
		connections: {
			Start: { main: [[{ node: 'Customers', type: 'main', index: 0 }]] },
			Customers: { main: [[{ node: PREPARE, type: 'main', index: 0 }]] },
			[PREPARE]: { main: [[{ node: SERVICE, type: 'main', index: 0 }]] },
			[SERVICE]: {
				main: [
					[{ node: 'Created', type: 'main', index: 0 }],
					[{ node: AFTER_ERROR, type: 'main', index: 0 }],
				],
			},
		},
	};
}

export const person = (email: string) => ({ first: 'Test', last: 'Person', email });
