import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { fromCents, sumCents } from '../../helpers/money';
import {
	CURRENCIES,
	FieldError,
	optionalBoolean,
	optionalText,
	parseLineItems,
	requireChoice,
	requireCurrency,
	requireCustomerId,
	requirePositiveAmountCents,
} from '../../helpers/validate';
import type { ServiceClient } from '../../transport/request';
import { itemFields, itemParameter } from '../itemParameter';
import { idempotencyOptions } from '../keys.descriptions';
import type { Prepared } from '../operation';
import { operationTool } from '../toolArguments';
import {
	numberOption,
	type NumberOption,
	readNumberOption,
	runOptions,
} from '../common.descriptions';

// Invoices are small, and a runaway download must not fill n8n's memory.
const maxPdfSize: NumberOption = {
	...numberOption('maxPdfSize', 'Max PDF Size (MB)', 50, { minValue: 1 }),
	displayOptions: { show: { downloadPdf: [true] } },
	description:
		'A larger PDF is refused: the download stops at this size (1 MB = 1,048,576 bytes) and the item fails, saying the invoice was created',
};

const properties: INodeProperties[] = [
	{
		displayName: 'Customer ID',
		name: 'customerId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. cust_123',
		description:
			'ID of the customer who receives the invoice, in the form cust_&lt;number&gt;, as output by Customer → Create',
		hint: 'Usually an expression such as {{ $json.id }} after a Customer → Create node',
	},
	{
		displayName: 'Currency',
		name: 'currency',
		type: 'options',
		options: CURRENCIES.map((code) => ({ name: code, value: code })),
		default: 'EUR',
		description: 'The ISO 4217 currency code of the invoice: EUR, USD or GBP',
	},
	{
		displayName: 'Specify Line Items',
		name: 'lineItemsMode',
		type: 'options',
		options: [
			{
				name: 'Using Fields Below',
				value: 'fields',
				description: 'Enter each line as a description and a price',
			},
			{
				name: 'Using JSON',
				value: 'json',
				description:
					'Pass an array of lines, usually with an expression over data from earlier nodes',
			},
		],
		default: 'fields',
		description: 'How the invoice lines are given',
	},
	{
		displayName: 'Line Items',
		name: 'lineItems',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Line Item',
		default: {},
		displayOptions: { show: { lineItemsMode: ['fields'] } },
		options: [
			{
				displayName: 'Line Item',
				name: 'item',
				values: [
					{
						displayName: 'Description',
						name: 'description',
						type: 'string',
						default: '',
						placeholder: 'e.g. Consulting, March',
						description: 'What is being invoiced on this line',
					},
					{
						displayName: 'Price',
						name: 'price',
						type: 'number',
						typeOptions: { numberPrecision: 2 },
						default: 0,
						description:
							'The price of this line excluding VAT, in the invoice currency: whole cents (at most 2 decimals), negative for a discount. A computed value off by floating-point rounding only (4.35 * 3 = 13.049999999999999) counts as its whole cents (13.05); a real third decimal such as 12.345 is refused.',
					},
				],
			},
		],
	},
	{
		displayName: 'Line Items (JSON)',
		name: 'lineItemsJson',
		type: 'json',
		default: '[\n  { "description": "Consulting", "price": 100 }\n]',
		required: true,
		displayOptions: { show: { lineItemsMode: ['json'] } },
		description:
			'An array of lines, each an object with "description" (text) and "price" (number excluding VAT in whole cents, at most 2 decimals; floating-point rounding such as 13.049999999999999 counts as 13.05, a real third decimal is refused). Further fields on a line are passed to the service unchanged.',
		hint: 'e.g. {{ $json.lines }} or [{"description": "Consulting", "price": 100}]',
	},
	{
		displayName: 'Amount',
		name: 'amountMode',
		type: 'options',
		options: [
			{
				name: 'Sum of Line Prices',
				value: 'sum',
				description: 'The invoice amount is the exact sum of the line prices',
			},
			{
				name: 'Custom Amount',
				value: 'custom',
				description: 'Give the amount yourself, for example when it differs from the sum of lines',
			},
		],
		default: 'sum',
		description: 'The total amount of the invoice, excluding VAT',
	},
	{
		displayName: 'Custom Amount',
		name: 'amount',
		type: 'number',
		typeOptions: { numberPrecision: 2, minValue: 0.01 },
		default: 0,
		required: true,
		displayOptions: { show: { amountMode: ['custom'] } },
		description:
			'The total amount excluding VAT, greater than 0, in whole cents (at most 2 decimals). A computed value off by floating-point rounding only (0.1 + 0.2 = 0.30000000000000004) counts as its whole cents (0.30); a real third decimal is refused.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Send Email',
				name: 'sendEmail',
				type: 'boolean',
				default: false,
				description:
					'Whether the service should e-mail the invoice to the customer. When not added, the service decides (sent as "send_email").',
			},
			{
				displayName: 'Download PDF',
				name: 'downloadPdf',
				type: 'boolean',
				default: false,
				description:
					'Whether to download the invoice PDF and attach it to the output item as a file',
			},
			{
				displayName: 'Put PDF in Field',
				name: 'binaryPropertyName',
				type: 'string',
				default: 'data',
				displayOptions: { show: { downloadPdf: [true] } },
				description: 'The name of the output binary field to put the PDF in. Empty means "data".',
			},
			maxPdfSize,
			...idempotencyOptions,
			...runOptions,
		],
	},
];

const displayOptions = { show: { resource: ['invoice'], operation: ['create'] } };

/** The spec does not name the e-mail switch; this is the field we send (documented in docs/reference.md). */
const SEND_EMAIL_FIELD = 'send_email';

export const tool = operationTool({
	// A model hands over lines as one JSON argument, so the tool starts in "Using JSON" mode.
	fixed: { lineItemsMode: 'json' },
	does: 'Create an invoice for an existing customer in Invoice Service; the service makes a PDF and can e-mail it.',
	asks: [
		['customerId', 'customer ID'],
		['currency', 'currency'],
		['lineItems', 'line items', 'lineItemsJson'],
	],
	answers: 'It answers with invoice_id, status and download_url (the PDF).',
	answerFields: ['invoice_id', 'status', 'download_url'],
});

export const description = updateDisplayOptions(displayOptions, properties);

/** How the Operation selector lists it. */
export const option = {
	name: 'Create',
	description: 'Create an invoice for a customer: the service makes a PDF and can e-mail it',
	action: 'Create an invoice',
};

/** Reads and validates one item's fields into the create-invoice request body; throws FieldError. */
function buildBody(this: IExecuteFunctions, itemIndex: number, options: IDataObject): IDataObject {
	const customerId = requireCustomerId(
		itemParameter(this, 'customerId', itemIndex, ''),
		'Customer ID',
	);
	const currency = requireCurrency(itemParameter(this, 'currency', itemIndex, ''), 'Currency');

	const mode = requireChoice(
		itemParameter(this, 'lineItemsMode', itemIndex, 'fields'),
		'Specify Line Items',
		['fields', 'json'],
		{ fields: 'Using Fields Below', json: 'Using JSON' },
	);
	const linesField = mode === 'json' ? 'Line Items (JSON)' : 'Line Items';
	const lines = parseLineItems(
		mode === 'json'
			? itemParameter(this, 'lineItemsJson', itemIndex, '')
			: ((this.getNodeParameter('lineItems', itemIndex, {}) as { item?: unknown }).item ?? []),
		linesField,
	);

	const amountMode = requireChoice(
		itemParameter(this, 'amountMode', itemIndex, 'sum'),
		'Amount',
		['sum', 'custom'],
		{ sum: 'Sum of Line Prices', custom: 'Custom Amount' },
	);
	let amountCents: number;
	// The custom amount is read only when chosen: a leftover value in the hidden field means nothing.
	if (amountMode === 'custom') {
		amountCents = requirePositiveAmountCents(
			itemParameter(this, 'amount', itemIndex, 0),
			'Custom Amount',
		);
	} else {
		amountCents = sumCents(lines.map((line) => line.priceCents));
		if (amountCents <= 0) {
			throw new FieldError(
				linesField,
				`the sum of the line prices must be greater than 0, got ${fromCents(amountCents)}`,
			);
		}
	}

	const sendEmail = optionalBoolean(options.sendEmail, 'Send Email');
	return {
		customer_id: customerId,
		amount: fromCents(amountCents),
		currency,
		items: lines.map((line) => ({
			...line.extra,
			description: line.description,
			price: fromCents(line.priceCents),
		})),
		// Sent only when the user chose: the spec does not name the switch, and the service's default stands otherwise.
		...(sendEmail !== undefined ? { [SEND_EMAIL_FIELD]: sendEmail } : {}),
	};
}

/** What one invoice needs: the request body, and where the PDF goes if it is wanted. */
export interface InvoiceRequest extends Prepared {
	binaryPropertyName?: string;
	/** Max PDF Size in MB, read with the other options so that `outputOf` reads no parameter. */
	maxPdfMb: number;
}

export function prepare(this: IExecuteFunctions, itemIndex: number): InvoiceRequest {
	const options = itemFields(this, 'options', itemIndex, [
		'sendEmail',
		'downloadPdf',
		'binaryPropertyName',
		maxPdfSize.name,
	]);
	const body = buildBody.call(this, itemIndex, options);
	const binaryPropertyName = optionalBoolean(options.downloadPdf, 'Download PDF')
		? (optionalText(options.binaryPropertyName, 'Put PDF in Field') ?? 'data')
		: undefined;
	const maxPdfMb = readNumberOption(options, maxPdfSize);
	return { body, binaryPropertyName, maxPdfMb };
}

export async function create(
	this: IExecuteFunctions,
	{ body }: InvoiceRequest,
	itemIndex: number,
	client: ServiceClient,
): Promise<IDataObject> {
	return await client.post('create-invoice', body, { itemIndex, requiredField: 'invoice_id' });
}

/** The output of a created invoice: its fields, and its PDF when Download PDF is on. */
export async function outputOf(
	this: IExecuteFunctions,
	{ binaryPropertyName, maxPdfMb }: InvoiceRequest,
	invoice: IDataObject,
	itemIndex: number,
	client: ServiceClient,
): Promise<INodeExecutionData> {
	if (binaryPropertyName === undefined) return { json: invoice };

	const pdf = await downloadPdf.call(this, client, invoice, itemIndex, maxPdfMb);
	return { json: invoice, binary: { [binaryPropertyName]: pdf } };
}

async function downloadPdf(
	this: IExecuteFunctions,
	client: ServiceClient,
	invoice: IDataObject,
	itemIndex: number,
	maxPdfMb: number,
) {
	const invoiceId = String(invoice.invoice_id);
	const file = await client.downloadPdf({
		invoiceId,
		url: invoice.download_url,
		itemIndex,
		maxBytes: Math.floor(maxPdfMb * 1024 * 1024),
	});
	return await this.helpers.prepareBinaryData(file.data, `${invoiceId}.pdf`, 'application/pdf');
}

export function createdId(json: IDataObject): string | undefined {
	return typeof json.invoice_id === 'string' ? json.invoice_id : undefined;
}
