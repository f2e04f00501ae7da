import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { configuredOutputs } from './actions/keys.descriptions';
import { resources, resourceOptions } from './actions/resources';
import { router } from './actions/router';
import { toolDescriptionProperties, withToolDefaults } from './actions/tool';

export class InvoiceService implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Invoice Service',
		name: 'invoiceService',
		icon: { light: 'file:invoiceService.svg', dark: 'file:invoiceService.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description:
			'Create customers and PDF invoices (optionally e-mailed) in the Customer and Invoice Service',
		defaults: { name: 'Invoice Service' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		// A second output, Already Created, while an Idempotency Key is set (see exactlyOnce/idempotencyKeys.ts).
		outputs: `={{(${configuredOutputs})($parameter)}}`,
		credentials: [{ name: 'invoiceServiceApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: resourceOptions,
				default: 'customer',
			},
			// In the generated tool variant: what the model is told the tool does, and fields that start as
			// arguments the model fills (see actions/tool.ts).
			...toolDescriptionProperties(),
			...withToolDefaults(Object.values(resources).flatMap(({ description }) => description)),
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
