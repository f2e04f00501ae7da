import nock from 'nock';
import { sleep, type IDataObject, type INodeParameters } from 'n8n-workflow';

import {
	API,
	API_KEY,
	ORIGIN,
	customerParameters,
	everythingVisible,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

const ADA = { first: 'Ada', last: 'Lovelace', email: 'ada@example.com' };
const noRetry = { options: { maxRetryWait: 0 } };

afterEach(() => nock.cleanAll());

async function createCustomerAgainst(
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
) {
	const scope = nock(ORIGIN)
		.post(`${API}/create-customer`)
		.reply(status, body as never, headers);
	const result = await runInvoiceService({ parameters: customerParameters(noRetry), items: [ADA] });
	expect(scope.isDone()).toBe(true);
	expect(everythingVisible(result)).not.toContain(API_KEY);
	return result;
}

describe('every answer of the service becomes one clear error', () => {
	it.each([
		[
			'400 with the service message',
			400,
			{ status: 'error', message: 'first_name is required' },
			{},
			'first_name is required',
			'400',
		],
		[
			'401',
			401,
			{ status: 'error', message: 'Unauthorized' },
			{},
			'The API key was rejected (HTTP 401): check the API key in the Invoice Service API credential',
			'401',
		],
		[
			'401 in Bubble error_class shape',
			401,
			{ error_class: 'Unauthorized', translation: 'Invalid token' },
			{},
			'The API key was rejected (HTTP 401): check the API key in the Invoice Service API credential',
			'401',
		],
		[
			'409',
			409,
			{ status: 'error', message: 'duplicate' },
			{},
			'A customer with the e-mail ada@example.com already exists',
			'409',
		],
		[
			'404 HTML',
			404,
			'<html><body>Not found</body></html>',
			{ 'content-type': 'text/html' },
			`Nothing found at ${ORIGIN}${API}/create-customer (HTTP 404)`,
			'404',
		],
		[
			'429 after the wait budget',
			429,
			{ status: 'error', message: 'Too many requests' },
			{ 'retry-after': '1' },
			'Rate limited by the service (HTTP 429): Too many requests',
			'429',
		],
		[
			'500',
			500,
			{ status: 'error', message: 'Workflow crashed' },
			{},
			'The service had an error (HTTP 500): Workflow crashed',
			'500',
		],
		[
			'502 HTML page',
			502,
			'<!DOCTYPE html><html><title>502</title></html>',
			{ 'content-type': 'text/html' },
			'The service had an error (HTTP 502) (an HTML error page, likely from a proxy)',
			'502',
		],
		[
			'200 with status error',
			200,
			{ status: 'error', message: 'Plan limit reached' },
			{},
			'Plan limit reached',
			'200',
		],
		[
			'200 with Bubble {statusCode, body}',
			200,
			{
				statusCode: 400,
				body: {
					status: 'MISSING_DATA',
					message: 'Missing parameter for workflow create-customer: parameter email',
				},
			},
			{},
			'Missing parameter for workflow create-customer: parameter email',
			'400',
		],
		[
			'200 HTML page',
			200,
			'<html><body>Welcome to my site</body></html>',
			{ 'content-type': 'text/html' },
			'The service answered create-customer with an HTML page instead of JSON',
			'200',
		],
		[
			'200 non-JSON text',
			200,
			'OK',
			{ 'content-type': 'text/plain' },
			'The service answered create-customer with something that is not JSON',
			'200',
		],
		[
			'200 without id',
			200,
			{ name: 'Ada Lovelace' },
			{},
			'Unexpected response from create-customer: the answer has no "id"',
			undefined,
		],
	])('%s', async (_name, status, body, headers, message, httpCode) => {
		const result = await createCustomerAgainst(status, body, headers);
		expect(result.error?.message).toBe(message);
		expect(result.error?.httpCode).toBe(httpCode ?? null);
		expect(result.error?.context).toMatchObject({ itemIndex: 0 });
	});

	it('names network failures in plain words, and retries a refused connection', async () => {
		const scope = nock(ORIGIN)
			.post(`${API}/create-customer`)
			.replyWithError(
				Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }),
			)
			.post(`${API}/create-customer`)
			.reply(200, { id: 'cust_5', name: 'Ada Lovelace', email: 'ada@example.com' });
		const result = await runInvoiceService({ parameters: customerParameters(), items: [ADA] });
		expect(scope.isDone()).toBe(true);
		expect(result.error).toBeUndefined();
		expect(result.outputs[0][0].json.id).toBe('cust_5');
	});

	it('never re-sends a create after the connection broke, and says the outcome is unknown', async () => {
		const scope = nock(ORIGIN)
			.post(`${API}/create-customer`)
			.replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
		const result = await runInvoiceService({ parameters: customerParameters(), items: [ADA] });
		expect(scope.isDone()).toBe(true);
		expect(result.error?.message).toMatch(
			/^The connection to app\.example\.com broke before the answer to create-customer arrived: outcome unknown$/,
		);
		expect(result.error?.description).toMatch(
			/^Outcome unknown: .*Check the service; if the record is not there, enter [2-9A-Z]{8} in Options → Resend Unknown Outcomes Of/,
		);
	});

	it('never re-sends a create that timed out', async () => {
		let calls = 0;
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(2)
			.delay(1500)
			.reply(() => {
				calls++;
				return [200, { id: 'cust_1' }];
			});
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { timeout: 1000 } }),
			items: [ADA],
		});
		expect(result.error?.message).toMatch(
			/^No answer from create-customer within the time-out: outcome unknown$/,
		);
		expect(calls).toBeLessThanOrEqual(1);
		expect(nock.pendingMocks()).toHaveLength(1);
	});

	it('retries 429 after the Retry-After the service asks for, then succeeds', async () => {
		const scope = nock(ORIGIN)
			.post(`${API}/create-customer`)
			.reply(429, { status: 'error', message: 'slow down' }, { 'retry-after': '1' })
			.post(`${API}/create-customer`)
			.reply(200, { id: 'cust_8', name: 'Ada Lovelace', email: 'ada@example.com' });
		const started = Date.now();
		const result = await runInvoiceService({ parameters: customerParameters(), items: [ADA] });
		expect(scope.isDone()).toBe(true);
		expect(result.error).toBeUndefined();
		expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
	});

	it('retries 503 and gives up with a clear message when the wait budget is spent', async () => {
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(3)
			.reply(503, { status: 'error', message: 'maintenance' }, { 'retry-after': '1' });
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { maxRetryWait: 2 } }),
			items: [ADA],
		});
		expect(result.error?.message).toBe('The service is unavailable (HTTP 503): maintenance');
		expect(result.error?.description).toMatch(
			/Retried for 2 s \(Max Retry Wait: 2 s\), then gave up/,
		);
		expect(nock.pendingMocks()).toHaveLength(0);
	});

	it("bounds a create's whole time, tries included, not only its waits: no try starts later than Max Retry Wait + 15 s after the first (issue 42's defect 4)", async () => {
		// Each 503 comes after 9 s (Timeout 10 s), asking for a 1 s wait: the waits alone (1 s each) would let a third
		// try start 20 s in, past Max Retry Wait (2 s) + 15 s; another delivery of the same key gives up 42 s after
		// the claim (Max Retry Wait + Timeout + 30 s), and a try must not still be under way then.
		const sent: number[] = [];
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(3)
			.delay(9000)
			.reply(() => {
				sent.push(Date.now());
				return [503, { status: 'error', message: 'maintenance' }, { 'retry-after': '1' }];
			});
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { maxRetryWait: 2, timeout: 10_000 } }),
			items: [ADA],
		});
		expect(result.error?.message).toBe('The service is unavailable (HTTP 503): maintenance');
		// Tries 10 s apart (9 s each, then the 1 s wait): the second starts 10 s after the first, a third would 20 s.
		expect(sent.map((at) => at - sent[0] <= 17_000)).toEqual([true, true]);
	}, 60_000);

	it.each<[string, Record<string, string>]>([
		['Retry-After: 0', { 'retry-after': '0' }],
		['a Retry-After in the past', { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }],
		['no Retry-After', {}],
	])(
		'%s: each retry waits at least 1 s and counts against Max Retry Wait (0 sends once, 2 s at most 3 times)',
		async (_name, headers) => {
			const busy = busyService(headers);

			const once = await runInvoiceService({
				parameters: customerParameters({ options: { maxRetryWait: 0 } }),
				items: [ADA],
			});
			expect(once.error?.message).toBe('The service is unavailable (HTTP 503): busy');
			expect(busy.sends).toBe(1);

			busy.sends = 0;
			const started = Date.now();
			await runInvoiceService({
				parameters: customerParameters({ options: { maxRetryWait: 2 } }),
				items: [ADA],
			});
			expect(busy.sends).toBeGreaterThanOrEqual(2);
			expect(busy.sends).toBeLessThanOrEqual(3);
			expect(Date.now() - started).toBeGreaterThanOrEqual((busy.sends - 1) * 1000);
		},
	);
});

it('a service that keeps answering 503 with Retry-After: 0 gets at most 12 sends of one request, whatever Max Retry Wait allows', async () => {
	const busy = busyService({ 'retry-after': '0' });
	const result = await runInvoiceService({
		parameters: customerParameters({ options: { maxRetryWait: 600 } }),
		items: [ADA],
	});
	expect(busy.sends).toBe(12);
	expect(result.error?.description).toMatch(
		/Sent 12 times in 1\d s \(the most the node sends one request\), then gave up\./,
	);
}, 60_000);

describe('bad input is refused before anything is sent, naming the field and the item', () => {
	const customerCases: Array<[string, IDataObject, string]> = [
		[
			'empty first name',
			{ ...ADA, first: '  ' },
			'Item 0: First Name is required and must be text, got "  "',
		],
		[
			'empty last name',
			{ ...ADA, last: '' },
			'Item 0: Last Name is required and must be text, got ""',
		],
		[
			'bad e-mail',
			{ ...ADA, email: 'ada-at-example.com' },
			'Item 0: Email must be an e-mail address like name@example.com, got "ada-at-example.com"',
		],
	];
	it.each(customerCases)('customer: %s', async (_name, item, message) => {
		const result = await runInvoiceService({ parameters: customerParameters(), items: [item] });
		expect(result.error?.message).toBe(message);
		expect(result.error?.description).toBe('Nothing was sent to the service for this item.');
	});

	const invoiceCases: Array<[string, INodeParameters, string]> = [
		[
			'customer id not cust_<n>',
			{ customerId: 'customer-1' },
			'Item 0: Customer ID must be a customer ID like cust_123 (the "id" returned by Create Customer), got "customer-1"',
		],
		[
			'currency outside the list',
			{ currency: 'CHF' },
			'Item 0: Currency must be one of EUR, USD, GBP, got "CHF"',
		],
		['no line items', { lineItems: {} }, 'Item 0: Line Items must contain at least one line item'],
		[
			'line without description',
			{ lineItems: { item: [{ description: '', price: 5 }] } },
			'Item 0: Line Items, line 1: Description is required and must be text, got ""',
		],
		[
			'price with 3 decimals',
			{ lineItems: { item: [{ description: 'x', price: 1.005 }] } },
			'Item 0: Line Items, line 1: Price must be a number with at most 2 decimals, like 19.99, got 1.005',
		],
		[
			'price not a number',
			{ lineItemsMode: 'json', lineItemsJson: '[{"description":"x","price":"ten"}]' },
			'Item 0: Line Items (JSON), line 1: Price must be a number with at most 2 decimals, like 19.99, got "ten"',
		],
		[
			'JSON that is not an array',
			{ lineItemsMode: 'json', lineItemsJson: '{"description":"x"}' },
			'Item 0: Line Items (JSON) must be an array of lines like [{"description": "Consulting", "price": 100}], got {"description":"x"}',
		],
		[
			'custom amount not positive',
			{ amountMode: 'custom', amount: -10 },
			'Item 0: Custom Amount must be greater than 0, got -10',
		],
	];
	it.each(invoiceCases)('invoice: %s', async (_name, extra, message) => {
		const result = await runInvoiceService({ parameters: invoiceParameters(extra) });
		expect(result.error?.message).toBe(message);
	});

	it('sends the valid items and reports the invalid one as an error item under "continue"', async () => {
		const scope = nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(2)
			.reply((_uri, body) => [
				200,
				{
					id: `cust_${(body as { first_name: string }).first_name.length}`,
					email: (body as { email: string }).email,
				},
			]);
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: [
				ADA,
				{ ...ADA, email: 'broken' },
				{ first: 'Grace', last: 'Hopper', email: 'grace@example.com' },
			],
			onError: 'continueErrorOutput',
		});
		expect(scope.isDone()).toBe(true);
		expect(result.outputs[0].map((item) => [item.json.id, item.pairedItem])).toEqual([
			['cust_3', { item: 0 }],
			['cust_5', { item: 2 }],
		]);
		expect(result.outputs[1]).toHaveLength(1);
		expect(result.outputs[1][0].json.error).toEqual({
			message: 'Item 1: Email must be an e-mail address like name@example.com, got "broken"',
			description: 'Nothing was sent to the service for this item.',
			itemIndex: 1,
		});
		expect(result.outputs[1][0].pairedItem).toEqual({ item: 1 });
	});
});

describe('the item loop', () => {
	it('keeps input order and pairedItem whatever order the answers arrive in', async () => {
		const emails = Array.from({ length: 12 }, (_, i) => `user${i}@example.com`);
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(12)
			.delay(5)
			.reply(async (_uri, body) => {
				const { email } = body as { email: string };
				const index = Number(email.match(/\d+/)![0]);
				await sleep((12 - index) * 15);
				return [200, { id: `cust_${index + 100}`, email }];
			});
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 6 } }),
			items: emails.map((email) => ({ first: 'A', last: 'B', email })),
		});
		expect(result.outputs[0].map((item) => item.json.email)).toEqual(emails);
		expect(result.outputs[0].map((item) => item.pairedItem)).toEqual(
			emails.map((_, item) => ({ item })),
		);
	});

	it('when it stops, says which items were already created', async () => {
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(2)
			.reply((_uri, body) => [
				200,
				{
					id: `cust_${(body as { email: string }).email.length}`,
					email: (body as { email: string }).email,
				},
			])
			.post(`${API}/create-customer`)
			.reply(409, { status: 'error', message: 'exists' });
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: [
				ADA,
				{ ...ADA, email: 'ab@example.com' },
				{ ...ADA, email: 'dup@example.com' },
				{ ...ADA, email: 'never@example.com' },
			],
		});
		expect(result.error?.message).toBe('A customer with the e-mail dup@example.com already exists');
		expect(result.error?.description).toContain(
			'Already created in this run before it stopped: item 0 (cust_15), item 1 (cust_14). Retry of this execution returns them without creating them again.',
		);
		expect(result.error?.description).toContain(
			'1 other item(s) were not sent: once the cause above is dealt with, Retry of this execution sends them.',
		);
	});

	it('routes a service error to the error output, paired to its input, with continueRegularOutput in output 0', async () => {
		nock(ORIGIN).post(`${API}/create-customer`).reply(409, { status: 'error', message: 'exists' });
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: [ADA],
			onError: 'continueRegularOutput',
		});
		expect(result.outputs[0][0].json).toEqual({
			error: {
				message: 'A customer with the e-mail ada@example.com already exists',
				description: 'The service said: exists',
				httpCode: '409',
				itemIndex: 0,
			},
		});
		expect(result.outputs[0][0].pairedItem).toEqual({ item: 0 });
	});
});

/** A create-customer service that always answers 503 with these headers; counts the sends. */
function busyService(headers: Record<string, string>) {
	const busy = { sends: 0 };
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(300)
		.reply(() => {
			busy.sends++;
			return [503, { status: 'error', message: 'busy' }, headers];
		});
	return busy;
}
