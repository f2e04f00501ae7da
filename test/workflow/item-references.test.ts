import { randomUUID } from 'node:crypto';

import nock from 'nock';
import { Expression, type IDataObject, type INodeParameters } from 'n8n-workflow';

import {
	API,
	ORIGIN,
	customerParameters,
	invoiceParameters,
	people,
	runInvoiceService,
} from '../support/invoice-service';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { configuredOutputs } from '../../nodes/InvoiceService/actions/keys.descriptions';

// A parameter that is one reference to a field of the item (`{{ $json.email }}`) is read from the item by the node
// (actions/itemParameter.ts), not by n8n's expression engine. It must give what n8n gives, for every value an item
// can hold: each case runs the node twice, once with `{{ $json.v }}` and once with `{{ ($json.v) }}`, which the
// node does not recognise and leaves to n8n, and both runs must send and answer the same.

afterEach(() => nock.cleanAll());

/** The values an item's field can hold: each one item of the run (`missing`: the field is absent). */
const values: Array<[string, unknown]> = [
	['text', 'Ada'],
	['text with spaces around', '  Ada  '],
	['unicode', 'Zoë 🙂 Łukasz'],
	['an e-mail', 'ada@example.com'],
	['an id', 'cust_12'],
	['a currency', 'usd'],
	['JSON text', '[{"description":"J","price":3}]'],
	['an expression as text', '={{ 1 + 1 }}'],
	['empty text', ''],
	['a whole number', 42],
	['zero', 0],
	['a decimal', 99.95],
	['a negative number', -5],
	['true', true],
	['false', false],
	['null', null],
	['an object', { a: 1 }],
	['a list', ['x']],
	['missing', undefined],
];

const item = (value: unknown): IDataObject =>
	value === undefined ? { other: 1 } : { v: value as IDataObject[string] };

interface Case {
	name: string;
	/** The node's parameters with `reference` (an expression) in the field under test. */
	parameters: (reference: string) => INodeParameters;
	endpoint: 'create-customer' | 'create-invoice';
}

const customer = (extra: (reference: string) => INodeParameters) => (reference: string) =>
	customerParameters({
		firstName: 'Ada',
		lastName: 'Lovelace',
		email: 'ada@example.com',
		...extra(reference),
	});
const invoice = (extra: (reference: string) => INodeParameters) => (reference: string) =>
	invoiceParameters(extra(reference));

const cases: Case[] = [
	{
		name: 'First Name',
		parameters: customer((r) => ({ firstName: r })),
		endpoint: 'create-customer',
	},
	{
		name: 'Last Name',
		parameters: customer((r) => ({ lastName: r })),
		endpoint: 'create-customer',
	},
	{ name: 'Email', parameters: customer((r) => ({ email: r })), endpoint: 'create-customer' },
	{
		name: 'Company Name (Additional Fields)',
		parameters: customer((r) => ({ additionalFields: { companyName: r } })),
		endpoint: 'create-customer',
	},
	{
		name: 'Customer ID',
		parameters: invoice((r) => ({ customerId: r })),
		endpoint: 'create-invoice',
	},
	{ name: 'Currency', parameters: invoice((r) => ({ currency: r })), endpoint: 'create-invoice' },
	{
		name: 'Custom Amount',
		parameters: invoice((r) => ({ amountMode: 'custom', amount: r })),
		endpoint: 'create-invoice',
	},
	{
		name: 'Line Items (JSON)',
		parameters: invoice((r) => ({ lineItemsMode: 'json', lineItemsJson: r })),
		endpoint: 'create-invoice',
	},
	{
		name: 'Send Email (Options)',
		parameters: invoice((r) => ({ options: { sendEmail: r } })),
		endpoint: 'create-invoice',
	},
	{
		name: 'Idempotency Key (Options)',
		parameters: invoice((r) => ({ options: { idempotencyKey: r } })),
		endpoint: 'create-invoice',
	},
];

/** One run of the node over one item per value: what the service received, and what the node answered. */
async function runWith(parameters: INodeParameters, endpoint: string, itemCount = values.length) {
	const received: unknown[] = [];
	nock.cleanAll();
	nock(ORIGIN)
		.post(`${API}/${endpoint}`)
		.times(itemCount)
		.reply((_uri, body) => {
			received.push(body);
			return [
				200,
				endpoint === 'create-customer'
					? { id: `cust_${received.length}`, name: 'Ada Lovelace', email: 'ada@example.com' }
					: { invoice_id: `inv_${received.length}`, status: 'sent' },
			];
		});
	const run = await runInvoiceService({
		parameters: {
			...parameters,
			options: { ...(parameters.options as IDataObject), concurrency: 1 },
		},
		items: values.slice(0, itemCount).map(([, value]) => item(value)),
		onError: 'continueRegularOutput',
		nodeId: randomUUID(),
	});
	expect(run.error).toBeUndefined();
	return { received, outputs: run.outputs.map((output) => output.map((out) => out.json)) };
}

/**
 * A run's outputs as if its parameter had been written as `written`: an error that quotes the expression (a
 * blank Idempotency Key) quotes it as written, and suggests the same field under `body` where it can name it.
 */
function asWrittenAs<T>(outputs: T, was: string, written: string): T {
	const field = /\$json\.(\w+)/.exec(written)?.[1];
	return JSON.parse(
		JSON.stringify(outputs)
			.split(was)
			.join(written)
			.split('{{ $json.body.eventId }}')
			.join(`{{ $json.body.${field} }}`),
	) as T;
}

describe('a parameter that refers to a field of the item gives what n8n gives', () => {
	it.each(cases)('$name', async ({ parameters, endpoint }) => {
		const read = await runWith(parameters('={{ $json.v }}'), endpoint);
		const evaluated = await runWith(parameters('={{ ($json.v) }}'), endpoint);
		expect(read).toEqual(asWrittenAs(evaluated, '{{ ($json.v) }}', '{{ $json.v }}'));
		// Some values were sent and some refused: the comparison covered both ways.
		expect(read.received.length).toBeGreaterThan(0);
		expect(read.received.length).toBeLessThan(values.length);
	});

	it.each([
		['a nested field', '={{ $json.person.name }}', { person: { name: 'Ada' } }, 'Ada'],
		['a field named in brackets', '={{ $json["first name"] }}', { 'first name': 'Ada' }, 'Ada'],
		['single quotes, no spaces', "={{$json['first name']}}", { 'first name': 'Ada' }, 'Ada'],
		[
			'a field whose name holds a dot',
			'={{ $json["a.b"] }}',
			{ 'a.b': 'Ada', a: { b: 'X' } },
			'Ada',
		],
	])('%s: %s', async (_name, reference, json, sent) => {
		const bodies: IDataObject[] = [];
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.reply((_uri, body) => {
				bodies.push(body as IDataObject);
				return [200, { id: 'cust_1' }];
			});
		const run = await runInvoiceService({
			parameters: customerParameters({ firstName: reference, lastName: 'L', email: 'a@b.co' }),
			items: [json],
		});
		expect(run.error).toBeUndefined();
		expect(bodies.map((body) => body.first_name)).toEqual([sent]);
	});
});

// A fixed value (no expression) is taken as it is too: n8n gives it unchanged for this node's parameters, as long as
// none has a `validateType` (n8n would check and convert the value). Each fixed value runs once as it is and once
// as an expression that n8n evaluates to the same value (an empty one is not among them: n8n refuses a workflow
// whose required parameter is empty before the node runs, and an empty Idempotency Key fails the item, saying so).
const fixedValues: unknown[] = [
	'Ada',
	'  Ada  ',
	' ',
	'usd',
	'EUR',
	'[{"description":"J","price":3}]',
	'cust_12',
	42,
	0,
	99.95,
	-5,
	true,
	false,
];

describe('a fixed value gives what n8n gives', () => {
	it('no parameter of the node has a validateType', () => {
		const withValidateType = (properties: unknown[]): string[] =>
			properties.flatMap((property) => {
				const { name, validateType, options, values } = property as IDataObject;
				const nested = [options, values].filter(Array.isArray) as unknown[][];
				return [...(validateType ? [String(name)] : []), ...nested.flatMap(withValidateType)];
			});
		expect(withValidateType(new InvoiceService().description.properties)).toEqual([]);
	});

	it.each(cases)('$name', async ({ parameters, endpoint }) => {
		for (const fixed of fixedValues) {
			const asIs = parameters(fixed as string);
			const expression = parameters(`={{ ${JSON.stringify(fixed)} }}`);
			// A fixed blank or true/false Idempotency Key gives the node one output (configuredOutputs), where any
			// expression gives two, and its error quotes the field, not an expression: those two runs differ by design
			// (both fail the item).
			if (configuredOutputs(asIs).length !== configuredOutputs(expression).length) continue;
			const read = await runWith(asIs, endpoint, 1);
			const evaluated = await runWith(expression, endpoint, 1);
			expect({ fixed, ...read }).toEqual({ fixed, ...evaluated });
		}
	});
});

describe("n8n's expression engine is not asked for a reference to the item's field", () => {
	it('three items, three references each: none evaluated by n8n; the same fields in parentheses: nine', async () => {
		const evaluations = jest.spyOn(Expression.prototype, 'resolveSimpleParameterValue');
		const items = [0, 1, 2].map((n) => ({ first: `F${n}`, last: `L${n}`, email: `p${n}@x.io` }));
		const countFor = async (parameters: INodeParameters) => {
			nock(ORIGIN).post(`${API}/create-customer`).times(3).reply(200, { id: 'cust_1' });
			evaluations.mockClear();
			const run = await runInvoiceService({ parameters, items, nodeId: randomUUID() });
			expect(run.error).toBeUndefined();
			return evaluations.mock.calls.length;
		};
		try {
			const read = await countFor(customerParameters());
			const evaluated = await countFor(
				customerParameters({
					firstName: '={{ ($json.first) }}',
					lastName: '={{ ($json.last) }}',
					email: '={{ ($json.email) }}',
				}),
			);
			expect(evaluated - read).toBe(9);
		} finally {
			evaluations.mockRestore();
		}
	});

	it('an Idempotency Key that n8n evaluates: once an item, not once more for the run options', async () => {
		const evaluations = jest.spyOn(Expression.prototype, 'resolveSimpleParameterValue');
		const items = people(3);
		const countFor = async (options: INodeParameters) => {
			nock(ORIGIN).post(`${API}/create-customer`).times(3).reply(200, { id: 'cust_1' });
			evaluations.mockClear();
			const parameters = customerParameters({ options });
			const run = await runInvoiceService({ parameters, items, nodeId: randomUUID() });
			expect(run.error).toBeUndefined();
			return evaluations.mock.calls.length;
		};
		try {
			const without = await countFor({ timeout: 20_000 });
			const keyed = await countFor({ timeout: 20_000, idempotencyKey: '={{ ($json.eventId) }}' });
			expect(keyed - without).toBe(3);
		} finally {
			evaluations.mockRestore();
		}
	});

	it('a key expression that fails for one item fails that item alone; the others are sent', async () => {
		// The first item has no event id: the key's expression throws for it alone.
		const items = people(2).map((person, index) => (index ? person : { ...person, eventId: null }));
		const sent = nock(ORIGIN).post(`${API}/create-customer`).reply(200, { id: 'cust_1' });
		const run = await runInvoiceService({
			parameters: customerParameters({
				options: { idempotencyKey: '={{ $json.eventId.toUpperCase() }}' },
			}),
			items,
			nodeId: randomUUID(),
			onError: 'continueRegularOutput',
		});
		expect(sent.isDone()).toBe(true);
		const [first, second] = run.outputs[0];
		expect(first.json.error).toMatchObject({ message: expect.stringMatching(/toUpperCase/) });
		expect(second.json).toMatchObject({ id: 'cust_1' });
	});
});
