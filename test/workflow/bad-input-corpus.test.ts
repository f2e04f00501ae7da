// The bad-input corpus (issue 9): odd and wrong values for every field, run through the real node inside n8n's
// WorkflowExecute with HTTP intercepted by nock. Each input is either accepted by a rule docs/reference.md states (and
// the test asserts the exact body sent) or refused with a message naming the field and the item (and the test
// asserts that nothing was sent for that item).
//
// Every row runs two items with On Error → Continue and Concurrency 1: item 0 holds a valid baseline value,
// item 1 the input under test. So each row also shows that a refusal is per item (item 0 is still sent) and that
// the message names the right item.
import nock from 'nock';
import {
	sleep,
	type IDataObject,
	type INodeExecutionData,
	type INodeParameters,
} from 'n8n-workflow';

import { API, ORIGIN, runInvoiceService } from '../support/invoice-service';

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

type Resource = 'customer' | 'invoice';

interface Field {
	resource: Resource;
	/** Parameters that put `value` (a parameter value: literal or expression) into this field. */
	place(value: string): INodeParameters;
	/** JavaScript source of a valid value, the one in the baseline body. */
	baseline: string;
}

const FEE = { description: 'Fee', price: 100 };
const LINES_JSON = JSON.stringify([{ description: 'Work', price: 10 }, FEE]);

const fields = {
	'First Name': { resource: 'customer', place: (v) => ({ firstName: v }), baseline: "'Ada'" },
	'Last Name': { resource: 'customer', place: (v) => ({ lastName: v }), baseline: "'Lovelace'" },
	Email: { resource: 'customer', place: (v) => ({ email: v }), baseline: "'ada@example.com'" },
	'Company Name': {
		resource: 'customer',
		place: (v) => ({ additionalFields: { companyName: v } }),
		baseline: "''",
	},
	'Customer ID': { resource: 'invoice', place: (v) => ({ customerId: v }), baseline: "'cust_7'" },
	Currency: { resource: 'invoice', place: (v) => ({ currency: v }), baseline: "'EUR'" },
	Description: {
		resource: 'invoice',
		place: (v) => ({ lineItems: { item: [{ description: v, price: 10 }, FEE] } }),
		baseline: "'Work'",
	},
	Price: {
		resource: 'invoice',
		place: (v) => ({ lineItems: { item: [{ description: 'Work', price: v }, FEE] } }),
		baseline: '10',
	},
	'Line Items (JSON)': {
		resource: 'invoice',
		place: (v) => ({ lineItemsMode: 'json', lineItemsJson: v }),
		baseline: `'${LINES_JSON}'`,
	},
	'Custom Amount': {
		resource: 'invoice',
		place: (v) => ({ amountMode: 'custom', amount: v }),
		baseline: '110',
	},
	'Send Email': {
		resource: 'invoice',
		place: (v) => ({ options: { concurrency: 1, sendEmail: v } }),
		baseline: "''",
	},
	'Download PDF': {
		resource: 'invoice',
		place: (v) => ({ options: { concurrency: 1, downloadPdf: v } }),
		baseline: 'false',
	},
	'Put PDF in Field': {
		resource: 'invoice',
		place: (v) => ({ options: { concurrency: 1, downloadPdf: true, binaryPropertyName: v } }),
		baseline: "'data'",
	},
} satisfies Record<string, Field>;

type FieldName = keyof typeof fields;

const baseParameters: Record<Resource, INodeParameters> = {
	customer: {
		resource: 'customer',
		operation: 'create',
		firstName: 'Ada',
		lastName: 'Lovelace',
		email: 'ada@example.com',
		options: { concurrency: 1 },
	},
	invoice: {
		resource: 'invoice',
		operation: 'create',
		customerId: 'cust_7',
		currency: 'EUR',
		lineItemsMode: 'fields',
		lineItems: { item: [{ description: 'Work', price: 10 }, FEE] },
		amountMode: 'sum',
		options: { concurrency: 1 },
	},
};

const baselineBody: Record<Resource, IDataObject> = {
	customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
	invoice: {
		customer_id: 'cust_7',
		amount: 110,
		currency: 'EUR',
		items: [{ description: 'Work', price: 10 }, FEE],
	},
};

interface Row {
	field: FieldName;
	/** Why this input is in the corpus, and the rule that decides it. */
	why: string;
	/** The input as upstream JSON data delivers it (`$json.value`)... */
	value?: unknown;
	/** ...or as JavaScript evaluated by n8n's expression (for NaN, Infinity, -0, computed prices). */
	js?: string;
	/** Accepted: the changes to the baseline body that the input makes (`{}`: the body is the baseline's). */
	sends?: IDataObject;
	/** Accepted, and a body key that must be absent (the optional field was not given). */
	omits?: string;
	/** Accepted with the PDF downloaded into this binary field. */
	binary?: string;
	/** Refused: the exact message (after "Item 1: "). */
	refuses?: string | RegExp;
}

/** A price row's changes: the tested line's price and the invoice amount (the sum with the 100.00 fee). */
const priced = (price: number, amount: number): IDataObject => ({
	items: [{ description: 'Work', price }, FEE],
	amount,
});
const lines = (items: IDataObject[], amount: number): IDataObject => ({ items, amount });
const A_LOT = 'Lorem ipsum dolor sit amet. '.repeat(4000).trim(); // 111,999 characters
const UNICODE =
	'Zoë Ōkubo-Łukasiewicz 日本語 עברית العربية 👩🏽‍💻 🇪🇺 e\u0301 \u{1D518}\u{1D52B}\u{1D526}\u{1D520}\u{1D52C}\u{1D521}\u{1D522}';
const NUMBER = 'must be a number with at most 2 decimals, like 19.99, got';
const COMMA = 'must use a dot for decimals and no thousands separators, like 1234.50, got';
const SIGN =
	'must be a plain number like 12.50, without a currency sign or code (the Currency field sets it), got';
const FINITE = 'must be a finite number with at most 2 decimals, like 19.99, got';
const CUSTOMER_ID =
	'must be a customer ID like cust_123 (the "id" returned by Create Customer), got';
const CURRENCY = 'must be one of EUR, USD, GBP, got';
const PROTO = '(it can change how objects behave in the service that reads it)';

const rows: Row[] = [
	// ---- First Name (required text)
	{ field: 'First Name', why: 'surrounding spaces are trimmed', value: '  Ada  ', sends: {} },
	{
		field: 'First Name',
		why: 'a number is written as text',
		value: 42,
		sends: { first_name: '42' },
	},
	{
		field: 'First Name',
		why: 'unusual Unicode is sent unchanged',
		value: UNICODE,
		sends: { first_name: UNICODE },
	},
	{
		field: 'First Name',
		why: 'very long text is sent whole (no limit of our own)',
		value: A_LOT,
		sends: { first_name: A_LOT },
	},
	{
		field: 'First Name',
		why: 'a control character inside is kept',
		value: 'Ada\u0000X',
		sends: { first_name: 'Ada\u0000X' },
	},
	{
		field: 'First Name',
		why: 'empty',
		value: '',
		refuses: 'First Name is required and must be text, got ""',
	},
	{
		field: 'First Name',
		why: 'null',
		value: null,
		refuses: 'First Name is required and must be text, got null',
	},
	{
		field: 'First Name',
		why: 'missing from the data',
		js: '$json.nothing',
		refuses: 'First Name is required and must be text, got nothing',
	},
	{
		field: 'First Name',
		why: 'only a zero-width space is blank',
		value: '\u200b',
		refuses: 'First Name is required and must be text, got "\u200b"',
	},
	{
		field: 'First Name',
		why: 'an array is not text',
		value: ['Ada'],
		refuses: 'First Name must be text, got ["Ada"]',
	},
	{
		field: 'First Name',
		why: 'an object is not text',
		value: { name: 'Ada' },
		refuses: 'First Name must be text, got {"name":"Ada"}',
	},
	{
		field: 'First Name',
		why: 'a boolean is not text',
		value: true,
		refuses: 'First Name must be text, got true',
	},
	{
		field: 'First Name',
		why: 'NaN is not text',
		js: 'NaN',
		refuses: 'First Name must be text, got NaN',
	},
	// ---- Last Name (required text)
	{
		field: 'Last Name',
		why: 'whitespace only',
		value: ' \t\n ',
		refuses: 'Last Name is required and must be text, got " \\t\\n "',
	},
	{
		field: 'Last Name',
		why: 'no-break spaces only',
		value: '\u00a0\u2003',
		refuses: 'Last Name is required and must be text, got "\u00a0\u2003"',
	},
	{
		field: 'Last Name',
		why: 'combining marks are kept as given',
		value: 'Lovela\u0063\u0327e',
		sends: { last_name: 'Lovela\u0063\u0327e' },
	},
	// ---- Email (required, e-mail shaped)
	{ field: 'Email', why: 'trimmed', value: ' ada@example.com\n', sends: {} },
	{
		field: 'Email',
		why: 'case is kept',
		value: 'ADA@Example.COM',
		sends: { email: 'ADA@Example.COM' },
	},
	{
		field: 'Email',
		why: 'an international domain is sent as given',
		value: 'ada@exämple.de',
		sends: { email: 'ada@exämple.de' },
	},
	{
		field: 'Email',
		why: 'no dot in the domain',
		value: 'ada@example',
		refuses: 'Email must be an e-mail address like name@example.com, got "ada@example"',
	},
	{
		field: 'Email',
		why: 'an array of addresses',
		value: ['ada@example.com'],
		refuses: 'Email must be text, got ["ada@example.com"]',
	},
	{
		field: 'Email',
		why: 'null',
		value: null,
		refuses: 'Email is required and must be text, got null',
	},
	// ---- Company Name (optional text: blank means not sent)
	{ field: 'Company Name', why: 'empty: not sent', value: '', sends: {}, omits: 'company_name' },
	{
		field: 'Company Name',
		why: 'spaces only: not sent',
		value: '     ',
		sends: {},
		omits: 'company_name',
	},
	{
		field: 'Company Name',
		why: 'tabs and line breaks only: not sent',
		value: '\t\r\n',
		sends: {},
		omits: 'company_name',
	},
	{
		field: 'Company Name',
		why: 'no-break space and byte-order mark only: not sent',
		value: '\u00a0\ufeff',
		sends: {},
		omits: 'company_name',
	},
	{ field: 'Company Name', why: 'null: not sent', value: null, sends: {}, omits: 'company_name' },
	{
		field: 'Company Name',
		why: 'missing from the data: not sent',
		js: '$json.nothing',
		sends: {},
		omits: 'company_name',
	},
	{
		field: 'Company Name',
		why: 'trimmed when given',
		value: '  Analytical Engines Ltd ',
		sends: { company_name: 'Analytical Engines Ltd' },
	},
	{
		field: 'Company Name',
		why: 'an array is not text (and the message does not say "required")',
		value: ['Acme'],
		refuses: 'Company Name must be text, got ["Acme"]',
	},
	{
		field: 'Company Name',
		why: 'an object is not text',
		value: {},
		refuses: 'Company Name must be text, got {}',
	},
	{
		field: 'Company Name',
		why: 'a boolean is not text',
		value: false,
		refuses: 'Company Name must be text, got false',
	},
	// ---- Customer ID (required, cust_<number>)
	{ field: 'Customer ID', why: 'trimmed', value: ' cust_42 ', sends: { customer_id: 'cust_42' } },
	{
		field: 'Customer ID',
		why: 'a bare number',
		value: 42,
		refuses: `Customer ID ${CUSTOMER_ID} 42`,
	},
	{
		field: 'Customer ID',
		why: 'full-width digits are not digits',
		value: 'cust_１２',
		refuses: `Customer ID ${CUSTOMER_ID} "cust_１２"`,
	},
	{
		field: 'Customer ID',
		why: 'null',
		value: null,
		refuses: 'Customer ID is required and must be text, got null',
	},
	{
		field: 'Customer ID',
		why: 'an array',
		value: ['cust_1'],
		refuses: 'Customer ID must be text, got ["cust_1"]',
	},
	// ---- Currency (one of EUR, USD, GBP; case and spaces ignored; blank refused, never guessed)
	{ field: 'Currency', why: 'lower case', value: 'usd', sends: { currency: 'USD' } },
	{ field: 'Currency', why: 'spaces around', value: ' gbp ', sends: { currency: 'GBP' } },
	{ field: 'Currency', why: 'not offered', value: 'CHF', refuses: `Currency ${CURRENCY} "CHF"` },
	{
		field: 'Currency',
		why: 'a symbol instead of a code',
		value: '€',
		refuses: `Currency ${CURRENCY} "€"`,
	},
	{ field: 'Currency', why: 'empty', value: '', refuses: `Currency ${CURRENCY} ""` },
	{ field: 'Currency', why: 'null', value: null, refuses: `Currency ${CURRENCY} null` },
	// ---- Line Items: Description (required text)
	{
		field: 'Description',
		why: 'unusual Unicode kept',
		value: 'Beratung – März ✓ 日本語',
		sends: lines([{ description: 'Beratung – März ✓ 日本語', price: 10 }, FEE], 110),
	},
	{
		field: 'Description',
		why: 'long text kept',
		value: A_LOT,
		sends: lines([{ description: A_LOT, price: 10 }, FEE], 110),
	},
	{
		field: 'Description',
		why: 'empty',
		value: '',
		refuses: 'Line Items, line 1: Description is required and must be text, got ""',
	},
	{
		field: 'Description',
		why: 'an object',
		value: { text: 'Work' },
		refuses: 'Line Items, line 1: Description must be text, got {"text":"Work"}',
	},
	// ---- Line Items: Price (whole cents, floating-point rounding forgiven)
	{
		field: 'Price',
		why: '4.35 * 3 = 13.049999999999999 is 13.05',
		js: '4.35 * 3',
		sends: priced(13.05, 113.05),
	},
	{
		field: 'Price',
		why: '0.1 + 0.2 = 0.30000000000000004 is 0.30',
		js: '0.1 + 0.2',
		sends: priced(0.3, 100.3),
	},
	{
		field: 'Price',
		why: '1.15 * 100 = 114.99999999999999 is 115',
		js: '1.15 * 100',
		sends: priced(115, 215),
	},
	{
		field: 'Price',
		why: 'the same rounding as text',
		value: '13.049999999999999',
		sends: priced(13.05, 113.05),
	},
	{ field: 'Price', why: 'numeric text', value: ' 12.50 ', sends: priced(12.5, 112.5) },
	{ field: 'Price', why: 'exponent notation as text', value: '1e2', sends: priced(100, 200) },
	{ field: 'Price', why: 'negative zero is 0', js: '-0', sends: priced(0, 100) },
	{ field: 'Price', why: 'a negative price is a discount', value: -5.5, sends: priced(-5.5, 94.5) },
	{
		field: 'Price',
		why: 'a third decimal',
		value: 12.345,
		refuses: `Line Items, line 1: Price ${NUMBER} 12.345`,
	},
	{
		field: 'Price',
		why: 'a small third decimal',
		value: 12.001,
		refuses: `Line Items, line 1: Price ${NUMBER} 12.001`,
	},
	{
		field: 'Price',
		why: 'a real fraction computed in an expression (19% VAT)',
		js: '10.01 * 1.19',
		refuses: `Line Items, line 1: Price ${NUMBER} 11.9119`,
	},
	{
		field: 'Price',
		why: 'a decimal comma',
		value: '12,50',
		refuses: `Line Items, line 1: Price ${COMMA} "12,50"`,
	},
	{
		field: 'Price',
		why: 'thousands separators',
		value: '1,234.50',
		refuses: `Line Items, line 1: Price ${COMMA} "1,234.50"`,
	},
	{
		field: 'Price',
		why: 'a currency sign',
		value: '€12',
		refuses: `Line Items, line 1: Price ${SIGN} "€12"`,
	},
	{
		field: 'Price',
		why: 'a currency code',
		value: '12.50 EUR',
		refuses: `Line Items, line 1: Price ${SIGN} "12.50 EUR"`,
	},
	{ field: 'Price', why: 'NaN', js: 'NaN', refuses: `Line Items, line 1: Price ${FINITE} NaN` },
	{
		field: 'Price',
		why: 'Infinity',
		js: '1 / 0',
		refuses: `Line Items, line 1: Price ${FINITE} Infinity`,
	},
	{
		field: 'Price',
		why: 'the text "Infinity"',
		value: 'Infinity',
		refuses: `Line Items, line 1: Price ${NUMBER} "Infinity"`,
	},
	{
		field: 'Price',
		why: 'too large to be money',
		value: 1e21,
		refuses:
			'Line Items, line 1: Price must be between -9999999999.99 and 9999999999.99, got 1e+21',
	},
	{
		field: 'Price',
		why: 'a word',
		value: 'twelve',
		refuses: `Line Items, line 1: Price ${NUMBER} "twelve"`,
	},
	{ field: 'Price', why: 'empty', value: '', refuses: `Line Items, line 1: Price ${NUMBER} ""` },
	{ field: 'Price', why: 'null', value: null, refuses: `Line Items, line 1: Price ${NUMBER} null` },
	{
		field: 'Price',
		why: 'an array',
		value: [12],
		refuses: `Line Items, line 1: Price ${NUMBER} [12]`,
	},
	{
		field: 'Price',
		why: 'a boolean',
		value: true,
		refuses: `Line Items, line 1: Price ${NUMBER} true`,
	},
	// ---- Line Items (JSON)
	{
		field: 'Line Items (JSON)',
		why: 'JSON text with a byte-order mark',
		value: `\ufeff${LINES_JSON}`,
		sends: {},
	},
	{
		field: 'Line Items (JSON)',
		why: 'an array from upstream data',
		value: [{ description: 'Work', price: 10 }, FEE],
		sends: {},
	},
	{
		field: 'Line Items (JSON)',
		why: 'extra line fields are passed on',
		value: [{ description: 'Work', price: 10, quantity: 3, sku: 'A-1' }],
		sends: lines([{ description: 'Work', price: 10, quantity: 3, sku: 'A-1' }], 10),
	},
	{
		field: 'Line Items (JSON)',
		why: 'a rounding-error price in JSON',
		value: '[{"description":"Work","price":13.049999999999999}]',
		sends: lines([{ description: 'Work', price: 13.05 }], 13.05),
	},
	{
		field: 'Line Items (JSON)',
		why: 'an exponent price in JSON',
		value: '[{"description":"Work","price":1e2}]',
		sends: lines([{ description: 'Work', price: 100 }], 100),
	},
	{
		field: 'Line Items (JSON)',
		why: 'a price as numeric text',
		value: '[{"description":"Work","price":"7.05"}]',
		sends: lines([{ description: 'Work', price: 7.05 }], 7.05),
	},
	{
		field: 'Line Items (JSON)',
		why: 'a __proto__ key (JSON text)',
		value: '[{"description":"Work","price":10,"__proto__":{"admin":true}}]',
		refuses: `Line Items (JSON), line 1 must not contain the key "__proto__" ${PROTO}`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a __proto__ key (upstream data)',
		value: JSON.parse('[{"description":"Work","price":10,"__proto__":{"admin":true}}]'),
		refuses: `Line Items (JSON), line 1 must not contain the key "__proto__" ${PROTO}`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a nested constructor.prototype key',
		value: '[{"description":"Work","price":10,"meta":{"constructor":{"prototype":{}}}}]',
		refuses: `Line Items (JSON), line 1 must not contain the key "constructor" ${PROTO}`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a decimal comma in a price',
		value: '[{"description":"Work","price":"12,50"}]',
		refuses: `Line Items (JSON), line 1: Price ${COMMA} "12,50"`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a number beyond floating point (1e400)',
		value: '[{"description":"Work","price":1e400}]',
		refuses: `Line Items (JSON), line 1: Price ${FINITE} Infinity`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a third decimal',
		value: '[{"description":"Work","price":1.005}]',
		refuses: `Line Items (JSON), line 1: Price ${NUMBER} 1.005`,
	},
	{
		field: 'Line Items (JSON)',
		why: 'a line without description',
		value: '[{"price":10}]',
		refuses: 'Line Items (JSON), line 1: Description is required and must be text, got nothing',
	},
	{
		field: 'Line Items (JSON)',
		why: 'a line that is not an object',
		value: '[null]',
		refuses: 'Line Items (JSON), line 1 must be an object with "description" and "price", got null',
	},
	{
		field: 'Line Items (JSON)',
		why: 'one object instead of an array',
		value: '{"description":"Work","price":10}',
		refuses:
			'Line Items (JSON) must be an array of lines like [{"description": "Consulting", "price": 100}], got {"description":"Work","price":10}',
	},
	{
		field: 'Line Items (JSON)',
		why: 'broken JSON (a trailing comma)',
		value: '[{"description":"Work","price":10},]',
		refuses: /^Line Items \(JSON\) is not valid JSON \(.+\)$/,
	},
	{
		field: 'Line Items (JSON)',
		why: 'an empty array',
		value: [],
		refuses: 'Line Items (JSON) must contain at least one line item',
	},
	{
		field: 'Line Items (JSON)',
		why: 'whitespace only',
		value: '  \n ',
		refuses: 'Line Items (JSON) must contain at least one line item',
	},
	{
		field: 'Line Items (JSON)',
		why: 'lines that sum to 0',
		value: '[{"description":"Work","price":10},{"description":"Credit","price":-10}]',
		refuses: 'Line Items (JSON) the sum of the line prices must be greater than 0, got 0',
	},
	// ---- Custom Amount (when chosen: whole cents, > 0)
	{ field: 'Custom Amount', why: '0.1 + 0.2 is 0.30', js: '0.1 + 0.2', sends: { amount: 0.3 } },
	{
		field: 'Custom Amount',
		why: 'a sum of 1,000 × 0.10 computed in the expression is 100.00',
		js: 'Array(1000).fill(0.1).reduce((a, b) => a + b, 0)',
		sends: { amount: 100 },
	},
	{
		field: 'Custom Amount',
		why: 'exponent notation as text',
		value: '2.5e1',
		sends: { amount: 25 },
	},
	{
		field: 'Custom Amount',
		why: 'a third decimal',
		value: 110.005,
		refuses: `Custom Amount ${NUMBER} 110.005`,
	},
	{
		field: 'Custom Amount',
		why: 'negative zero',
		js: '-0',
		refuses: 'Custom Amount must be greater than 0, got -0',
	},
	{
		field: 'Custom Amount',
		why: 'a currency sign',
		value: '£110',
		refuses: `Custom Amount ${SIGN} "£110"`,
	},
	{
		field: 'Custom Amount',
		why: 'a decimal comma',
		value: '110,00',
		refuses: `Custom Amount ${COMMA} "110,00"`,
	},
	{
		field: 'Custom Amount',
		why: 'null when chosen',
		value: null,
		refuses: `Custom Amount ${NUMBER} null`,
	},
	{
		field: 'Custom Amount',
		why: 'an object',
		value: { value: 110 },
		refuses: `Custom Amount ${NUMBER} {"value":110}`,
	},
	// ---- Send Email (optional switch)
	{ field: 'Send Email', why: 'empty: not sent', value: '', sends: {}, omits: 'send_email' },
	{ field: 'Send Email', why: 'null: not sent', value: null, sends: {}, omits: 'send_email' },
	{
		field: 'Send Email',
		why: 'the text "true" from a form',
		value: 'true',
		sends: { send_email: true },
	},
	{
		field: 'Send Email',
		why: 'the text " FALSE "',
		value: ' FALSE ',
		sends: { send_email: false },
	},
	{
		field: 'Send Email',
		why: 'yes is not a switch value',
		value: 'yes',
		refuses: 'Send Email must be true or false, got "yes"',
	},
	{
		field: 'Send Email',
		why: '1 is not a switch value',
		value: 1,
		refuses: 'Send Email must be true or false, got 1',
	},
	// ---- Download PDF / Put PDF in Field (optional)
	{ field: 'Download PDF', why: 'the text "false" downloads nothing', value: 'false', sends: {} },
	{
		field: 'Download PDF',
		why: 'the text "true" downloads',
		value: 'true',
		sends: {},
		binary: 'data',
	},
	{
		field: 'Download PDF',
		why: 'an object is not a switch',
		value: {},
		refuses: 'Download PDF must be true or false, got {}',
	},
	{
		field: 'Put PDF in Field',
		why: 'blank means the default "data"',
		value: '  ',
		sends: {},
		binary: 'data',
	},
	{
		field: 'Put PDF in Field',
		why: 'null means the default "data"',
		value: null,
		sends: {},
		binary: 'data',
	},
	{
		field: 'Put PDF in Field',
		why: 'trimmed',
		value: ' invoicePdf ',
		sends: {},
		binary: 'invoicePdf',
	},
	{
		field: 'Put PDF in Field',
		why: 'an array is not a field name',
		value: ['pdf'],
		refuses: 'Put PDF in Field must be text, got ["pdf"]',
	},
];

afterEach(() => nock.cleanAll());

/** Intercepts both create calls and the PDF download, recording what was sent. */
function interceptService() {
	const sent: IDataObject[] = [];
	let next = 1;
	const record = (body: unknown): IDataObject => {
		sent.push(body as IDataObject);
		return {
			id: `cust_${next}`,
			invoice_id: `inv_${next}`,
			status: 'sent',
			download_url: `${ORIGIN}/files/inv_${next++}.pdf`,
		};
	};
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(2)
		.optionally()
		.reply((_uri, body) => [200, record(body)]);
	nock(ORIGIN)
		.post(`${API}/create-invoice`)
		.times(2)
		.optionally()
		.reply((_uri, body) => [200, record(body)]);
	nock(ORIGIN)
		.get(/^\/files\/inv_\d+\.pdf$/)
		.times(2)
		.optionally()
		.reply(200, PDF, { 'content-type': 'application/pdf' });
	return sent;
}

function errorOf(item: INodeExecutionData): { message?: string; description?: string } | undefined {
	return item.json.error as { message?: string; description?: string } | undefined;
}

describe('bad-input corpus through the real node', () => {
	it('covers at least 60 inputs and every field', () => {
		expect(rows.length).toBeGreaterThanOrEqual(60);
		expect(new Set(rows.map((row) => row.field))).toEqual(new Set(Object.keys(fields)));
	});

	it.each(rows.map((row) => [row.field, row.why, row] as const))(
		'%s: %s',
		async (fieldName, _why, row) => {
			const field: Field = fields[fieldName];
			const input = row.js ?? '$json.value';
			const parameter = `={{ $json.case ? (${input}) : ${field.baseline} }}`;
			const base = baseParameters[field.resource];
			const placed = field.place(parameter);
			const sent = interceptService();

			const result = await runInvoiceService({
				parameters: { ...base, ...placed },
				items: [{ case: false }, { case: true, value: row.value as IDataObject }],
				onError: 'continueRegularOutput',
			});

			expect(result.status).toBe('success');
			const [baseline, tested] = result.outputs[0];
			// The baseline item is always sent and succeeds: a refusal is per item.
			expect(errorOf(baseline)).toBeUndefined();
			expect(sent[0]).toEqual(baselineBody[field.resource]);

			if (row.refuses !== undefined) {
				const error = errorOf(tested);
				expect(error?.message?.startsWith('Item 1: ')).toBe(true);
				const problem = error?.message?.slice('Item 1: '.length);
				if (typeof row.refuses === 'string') expect(problem).toBe(row.refuses);
				else expect(problem).toMatch(row.refuses);
				expect(error?.description).toBe('Nothing was sent to the service for this item.');
				expect(tested.pairedItem).toEqual({ item: 1 });
				expect(sent).toHaveLength(1); // nothing was sent for the refused item
			} else {
				expect(errorOf(tested)).toBeUndefined();
				expect(sent).toHaveLength(2);
				expect(sent[1]).toEqual({ ...baselineBody[field.resource], ...row.sends });
				if (row.omits) expect(sent[1]).not.toHaveProperty(row.omits);
				expect(Object.keys(tested.binary ?? {})).toEqual(row.binary ? [row.binary] : []);
			}
		},
	);
});

// Run options are read once, from the first item, and shape the whole run: a bad one stops the run before anything
// is sent; blank means the option's default.
interface RunOptionRow {
	option: 'concurrency' | 'maxRetryWait' | 'timeout';
	value: unknown;
	refuses?: string;
}

const runOptionRows: RunOptionRow[] = [
	{ option: 'concurrency', value: '' },
	{ option: 'concurrency', value: null },
	{ option: 'concurrency', value: ' 3 ' },
	{
		option: 'concurrency',
		value: 0,
		refuses: 'Concurrency must be a whole number from 1 to 50, got 0',
	},
	{
		option: 'concurrency',
		value: 2.5,
		refuses: 'Concurrency must be a whole number from 1 to 50, got 2.5',
	},
	{
		option: 'concurrency',
		value: 51,
		refuses: 'Concurrency must be a whole number from 1 to 50, got 51',
	},
	{
		option: 'concurrency',
		value: 'many',
		refuses: 'Concurrency must be a whole number from 1 to 50, got "many"',
	},
	{ option: 'maxRetryWait', value: '   ' },
	{ option: 'maxRetryWait', value: '0' },
	{
		option: 'maxRetryWait',
		value: -1,
		refuses: 'Max Retry Wait (Seconds) must be a number of at least 0, got -1',
	},
	{
		option: 'maxRetryWait',
		value: [5],
		refuses: 'Max Retry Wait (Seconds) must be a number of at least 0, got [5]',
	},
	{ option: 'timeout', value: '' },
	{ option: 'timeout', value: '1e4' },
	{
		option: 'timeout',
		value: 500,
		refuses: 'Timeout (Ms) must be a number of at least 1000, got 500',
	},
	{
		option: 'timeout',
		value: 'NaN',
		refuses: 'Timeout (Ms) must be a number of at least 1000, got "NaN"',
	},
];

describe('run options through the real node', () => {
	it.each(runOptionRows.map((row) => [row.option, row.value, row] as const))(
		'%s = %j',
		async (_option, _value, row) => {
			const sent = interceptService();
			const result = await runInvoiceService({
				parameters: {
					...baseParameters.customer,
					options: { [row.option]: '={{ $json.value }}' },
				},
				items: [{ value: row.value as IDataObject }],
			});
			if (row.refuses) {
				expect(result.error?.message).toBe(`Item 0: ${row.refuses}`);
				expect(sent).toHaveLength(0);
			} else {
				expect(result.error).toBeUndefined();
				expect(sent).toEqual([baselineBody.customer]);
			}
		},
	);

	it('a blank Concurrency is the default 5, not 1', async () => {
		let inFlight = 0;
		let most = 0;
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(8)
			.reply(async () => {
				most = Math.max(most, ++inFlight);
				await sleep(100);
				inFlight--;
				return [200, { id: 'cust_1' }];
			});
		const result = await runInvoiceService({
			parameters: { ...baseParameters.customer, options: { concurrency: '={{ $json.value }}' } },
			items: Array.from({ length: 8 }, () => ({ value: '  ' })),
		});
		expect(result.error).toBeUndefined();
		expect(most).toBe(5);
	});
});

// Selectors are usually picked in the editor; a workflow written by hand or by an agent may hold anything.
describe('selectors through the real node', () => {
	it.each([
		[
			'amountMode',
			'total',
			'Item 0: Amount must be one of sum (Sum of Line Prices), custom (Custom Amount), got "total"',
		],
		[
			'lineItemsMode',
			'csv',
			'Item 0: Specify Line Items must be one of fields (Using Fields Below), json (Using JSON), got "csv"',
		],
	])('%s = %j is refused, nothing sent', async (parameter, value, message) => {
		const sent = interceptService();
		const result = await runInvoiceService({
			parameters: { ...baseParameters.invoice, [parameter]: value },
		});
		expect(result.error?.message).toBe(message);
		expect(sent).toHaveLength(0);
	});
});
