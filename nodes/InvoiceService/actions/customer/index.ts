import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import * as create from './create.operation';

/** What the router runs, by the operation's `value` in the list below. */
export const operations: Record<string, Operation> = { create };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['customer'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Create a customer in the service',
				action: 'Create a customer',
			},
		],
		default: 'create',
	},
	...create.description,
];
