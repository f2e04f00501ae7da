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
	parseLineItems,
	requireCurrency,
	requireCustomerId,
	requirePositiveAmountCents,
	requireText,
} from '../../helpers/validate';
import { DEFAULT_MAX_PDF_MB, type ServiceClient } from '../../transport/request';
import { runOptions } from '../common.descriptions';

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
							'The price of this line excluding VAT, in the invoice currency, with at most 2 decimals',
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
			'An array of lines, each an object with "description" (text) and "price" (number excluding VAT, at most 2 decimals). Further fields on a line are passed to the service unchanged.',
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
		description: 'The total amount excluding VAT, greater than 0, with at most 2 decimals',
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
				description: 'The name of the output binary field to put the PDF in',
			},
			{
				displayName: 'Max PDF Size (MB)',
				name: 'maxPdfSize',
				type: 'number',
				typeOptions: { minValue: 1, numberPrecision: 0 },
				default: DEFAULT_MAX_PDF_MB,
				displayOptions: { show: { downloadPdf: [true] } },
				description:
					'A larger PDF is refused: the download stops at this size (1 MB = 1,048,576 bytes) and the item fails, saying the invoice was created',
			},
			...runOptions,
		],
	},
];

const displayOptions = { show: { resource: ['invoice'], operation: ['create'] } };

/** The spec does not name the e-mail switch; this is the field we send (documented in the README). */
export const SEND_EMAIL_FIELD = 'send_email';

export const description = updateDisplayOptions(displayOptions, properties);

/** Reads and validates one item's fields into the create-invoice request body; throws FieldError. */
export function buildBody(
	this: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
): IDataObject {
	const customerId = requireCustomerId(
		this.getNodeParameter('customerId', itemIndex, ''),
		'Customer ID',
	);
	const currency = requireCurrency(this.getNodeParameter('currency', itemIndex, ''), 'Currency');

	const mode = this.getNodeParameter('lineItemsMode', itemIndex, 'fields') as string;
	const lines =
		mode === 'json'
			? parseLineItems(this.getNodeParameter('lineItemsJson', itemIndex, ''), 'Line Items (JSON)')
			: parseLineItems(
					(this.getNodeParameter('lineItems', itemIndex, {}) as { item?: IDataObject[] }).item ??
						[],
					'Line Items',
				);

	let amountCents: number;
	if (this.getNodeParameter('amountMode', itemIndex, 'sum') === 'custom') {
		amountCents = requirePositiveAmountCents(
			this.getNodeParameter('amount', itemIndex, 0),
			'Custom Amount',
		);
	} else {
		amountCents = sumCents(lines.map((line) => line.priceCents));
		if (amountCents <= 0) {
			throw new FieldError(
				'Line Items',
				`the sum of the line prices must be greater than 0, got ${fromCents(amountCents)}`,
			);
		}
	}

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
		...(typeof options.sendEmail === 'boolean' ? { [SEND_EMAIL_FIELD]: options.sendEmail } : {}),
	};
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ServiceClient,
): Promise<INodeExecutionData> {
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const body = buildBody.call(this, itemIndex, options);
	const binaryPropertyName = options.downloadPdf
		? requireText(options.binaryPropertyName ?? 'data', 'Put PDF in Field')
		: undefined;

	const invoice = await client.post('create-invoice', body, {
		itemIndex,
		requiredField: 'invoice_id',
	});
	if (binaryPropertyName === undefined) return { json: invoice };

	const maxPdfMb = Number(options.maxPdfSize ?? DEFAULT_MAX_PDF_MB);
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
