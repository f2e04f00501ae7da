import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionalText, requireEmail, requireText } from '../../helpers/validate';
import type { ServiceClient } from '../../transport/request';
import { runOptions } from '../common.descriptions';
import { itemFields, itemParameter } from '../itemParameter';
import { idempotencyOptions } from '../keys.descriptions';
import type { Prepared } from '../operation';
import { operationTool } from '../toolArguments';

const properties: INodeProperties[] = [
	{
		displayName: 'First Name',
		name: 'firstName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Ada',
		description: "The customer's first name",
	},
	{
		displayName: 'Last Name',
		name: 'lastName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Lovelace',
		description: "The customer's last name",
	},
	{
		displayName: 'Email',
		name: 'email',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. ada@example.com',
		description:
			"The customer's business e-mail address, used to send invoices. Must be unique: the service refuses a second customer with the same e-mail.",
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Company Name',
				name: 'companyName',
				type: 'string',
				default: '',
				placeholder: 'e.g. Analytical Engines Ltd',
				description:
					"The customer's company, if any. Empty or only spaces means none: company_name is then not sent.",
			},
		],
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [...idempotencyOptions, ...runOptions],
	},
];

const displayOptions = { show: { resource: ['customer'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/** How the Operation selector lists it. */
export const option = {
	name: 'Create',
	description: 'Create a customer in the service',
	action: 'Create a customer',
};

export const tool = operationTool({
	does: 'Create a customer in Invoice Service.',
	asks: [
		['firstName', 'first name'],
		['lastName', 'last name'],
		['email', 'e-mail'],
	],
	answers:
		"It answers with the new customer's id (like cust_123: the customer ID to invoice them), name and email.",
	answerFields: ['id', 'name', 'email'],
});

/** Reads and validates one item's fields into the create-customer request body; throws FieldError. */
export function prepare(this: IExecuteFunctions, itemIndex: number): Prepared {
	const additional = itemFields(this, 'additionalFields', itemIndex, ['companyName']);
	const companyName = optionalText(additional.companyName, 'Company Name');
	const body = {
		first_name: requireText(itemParameter(this, 'firstName', itemIndex, ''), 'First Name'),
		last_name: requireText(itemParameter(this, 'lastName', itemIndex, ''), 'Last Name'),
		email: requireEmail(itemParameter(this, 'email', itemIndex, ''), 'Email'),
		...(companyName !== undefined ? { company_name: companyName } : {}),
	};
	return { body };
}

export async function create(
	this: IExecuteFunctions,
	{ body }: Prepared,
	itemIndex: number,
	client: ServiceClient,
): Promise<IDataObject> {
	return await client.post('create-customer', body, {
		itemIndex,
		requiredField: 'id',
		conflictMessage: `A customer with the e-mail ${String(body.email)} already exists`,
	});
}

/** The id of what this operation created, for "already created" reports when a run stops. */
export function createdId(json: IDataObject): string | undefined {
	return typeof json.id === 'string' ? json.id : undefined;
}
