import nock from 'nock';
import type { INodeParameters, INodeProperties } from 'n8n-workflow';

import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import {
	API,
	ORIGIN,
	customerParameters,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

afterEach(() => nock.cleanAll());

/** Finds a UI field by its parameter path (e.g. "options.sendEmail", "lineItems.item.price") for a resource. */
function findField(resource: string, path: string): INodeProperties | undefined {
	const [first, ...rest] = path.split('.');
	let field = new InvoiceService().description.properties.find(
		(p) =>
			p.name === first &&
			(p.displayOptions?.show?.resource as string[] | undefined)?.includes(resource),
	);
	for (const name of rest) {
		const options = (field?.options ?? []) as Array<
			INodeProperties & { values?: INodeProperties[] }
		>;
		const next = options.find((o) => o.name === name);
		field = next?.values ? ({ ...next, options: next.values } as INodeProperties) : next;
	}
	return field;
}

interface Row {
	resource: 'customer' | 'invoice';
	uiField: string;
	parameters: INodeParameters;
	bodyPath: string;
	sent: unknown;
}

// Every field a user can set, the request field it must reach, and the value that must arrive there.
const rows: Row[] = [
	{
		resource: 'customer',
		uiField: 'firstName',
		parameters: customerParameters({ firstName: 'Zed' }),
		bodyPath: 'first_name',
		sent: 'Zed',
	},
	{
		resource: 'customer',
		uiField: 'lastName',
		parameters: customerParameters({ lastName: 'Quux' }),
		bodyPath: 'last_name',
		sent: 'Quux',
	},
	{
		resource: 'customer',
		uiField: 'email',
		parameters: customerParameters({ email: 'zed@quux.io' }),
		bodyPath: 'email',
		sent: 'zed@quux.io',
	},
	{
		resource: 'customer',
		uiField: 'additionalFields.companyName',
		parameters: customerParameters({ additionalFields: { companyName: 'Quux Ltd' } }),
		bodyPath: 'company_name',
		sent: 'Quux Ltd',
	},
	{
		resource: 'invoice',
		uiField: 'customerId',
		parameters: invoiceParameters({ customerId: 'cust_314' }),
		bodyPath: 'customer_id',
		sent: 'cust_314',
	},
	{
		resource: 'invoice',
		uiField: 'currency',
		parameters: invoiceParameters({ currency: 'USD' }),
		bodyPath: 'currency',
		sent: 'USD',
	},
	{
		resource: 'invoice',
		uiField: 'lineItems.item.description',
		parameters: invoiceParameters({ lineItems: { item: [{ description: 'Audit', price: 1 }] } }),
		bodyPath: 'items.0.description',
		sent: 'Audit',
	},
	{
		resource: 'invoice',
		uiField: 'lineItems.item.price',
		parameters: invoiceParameters({
			lineItems: { item: [{ description: 'Audit', price: 42.42 }] },
		}),
		bodyPath: 'items.0.price',
		sent: 42.42,
	},
	{
		resource: 'invoice',
		uiField: 'lineItemsJson',
		parameters: invoiceParameters({
			lineItemsMode: 'json',
			lineItemsJson: '[{"description":"J","price":3,"unit":"h"}]',
		}),
		bodyPath: 'items',
		sent: [{ description: 'J', price: 3, unit: 'h' }],
	},
	{
		resource: 'invoice',
		uiField: 'amount',
		parameters: invoiceParameters({ amountMode: 'custom', amount: 99.95 }),
		bodyPath: 'amount',
		sent: 99.95,
	},
	{
		resource: 'invoice',
		uiField: 'options.sendEmail',
		parameters: invoiceParameters({ options: { sendEmail: true } }),
		bodyPath: 'send_email',
		sent: true,
	},
];

describe('every UI field reaches the request body under the right name', () => {
	it.each(rows)(
		'$resource: $uiField → $bodyPath',
		async ({ resource, uiField, parameters, bodyPath, sent }) => {
			expect(findField(resource, uiField)).toBeDefined();

			let body: Record<string, unknown> | undefined;
			const endpoint = `${String(parameters.operation)}-${resource}`;
			nock(ORIGIN)
				.post(`${API}/${endpoint}`)
				.reply((_uri, received) => {
					body = received as Record<string, unknown>;
					return [
						200,
						resource === 'customer' ? { id: 'cust_1' } : { invoice_id: 'inv_1', status: 'sent' },
					];
				});

			const result = await runInvoiceService({
				parameters,
				items: [{ first: 'Ada', last: 'Lovelace', email: 'ada@example.com' }],
			});

			expect(result.error).toBeUndefined();
			const value = bodyPath
				.split('.')
				.reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], body);
			expect(value).toEqual(sent);
		},
	);

	it('the table covers every parameter of both operations', () => {
		const covered = new Set(rows.map((row) => `${row.resource}:${row.uiField.split('.')[0]}`));
		// Parameters that choose a mode or shape the run, not a body field, are covered by their own tests.
		const notBodyFields = new Set([
			'resource',
			'operation',
			'lineItemsMode',
			'amountMode',
			'options',
			'additionalFields',
			// What the model is told about the tool (tool variant only): test/workflow/tool-description.test.ts.
			'toolDescription',
		]);
		for (const property of new InvoiceService().description.properties) {
			if (notBodyFields.has(property.name)) continue;
			for (const resource of (property.displayOptions?.show?.resource as string[] | undefined) ??
				[]) {
				expect(covered).toContain(`${resource}:${property.name}`);
			}
		}
	});
});
