import nock from 'nock';

import {
	API,
	API_KEY,
	ORIGIN,
	customerParameters,
	everythingVisible,
	runInvoiceService,
} from '../support/invoice-service';

afterEach(() => nock.cleanAll());

describe('Customer → Create inside a real workflow run', () => {
	it('sends the fields from upstream items with the Bearer key and outputs the customer', async () => {
		const received: Array<{ auth?: string; type?: string; body: unknown }> = [];
		const scope = nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(2)
			.reply(function (_uri, body) {
				received.push({
					auth: this.req.headers.authorization,
					type: this.req.headers['content-type'],
					body,
				});
				const { first_name, last_name, email } = body as Record<string, string>;
				return [200, { id: `cust_${received.length}`, name: `${first_name} ${last_name}`, email }];
			});

		const result = await runInvoiceService({
			parameters: customerParameters({ additionalFields: { companyName: '={{ $json.company }}' } }),
			items: [
				{ first: 'Ada', last: 'Lovelace', email: 'ada@example.com', company: 'Engines Ltd' },
				{ first: 'Grace', last: 'Hopper', email: 'grace@example.com', company: '' },
			],
		});

		expect(result.error).toBeUndefined();
		expect(scope.isDone()).toBe(true);
		expect(received.map((r) => r.auth)).toEqual([`Bearer ${API_KEY}`, `Bearer ${API_KEY}`]);
		expect(received[0].type).toMatch(/^application\/json/);
		expect(received.map((r) => r.body)).toEqual([
			{
				first_name: 'Ada',
				last_name: 'Lovelace',
				email: 'ada@example.com',
				company_name: 'Engines Ltd',
			},
			// an empty optional field is not sent at all
			{ first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' },
		]);
		expect(result.outputs[0]).toEqual([
			{
				json: { id: 'cust_1', name: 'Ada Lovelace', email: 'ada@example.com' },
				pairedItem: { item: 0 },
			},
			{
				json: { id: 'cust_2', name: 'Grace Hopper', email: 'grace@example.com' },
				pairedItem: { item: 1 },
			},
		]);
		expect(everythingVisible(result)).not.toContain(API_KEY);
	});

	it('accepts the app root, a trailing slash or the full path as Base URL', async () => {
		for (const baseUrl of [`${ORIGIN}/`, `${ORIGIN}${API}`, `  ${ORIGIN}${API}/ `]) {
			const scope = nock(ORIGIN)
				.post(`${API}/create-customer`)
				.reply(200, { id: 'cust_1', name: 'A B', email: 'a@b.io' });
			const result = await runInvoiceService({
				parameters: customerParameters(),
				items: [{ first: 'A', last: 'B', email: 'a@b.io' }],
				credentials: { baseUrl },
			});
			expect(result.error).toBeUndefined();
			expect(scope.isDone()).toBe(true);
		}
	});

	it('unwraps the Bubble envelope', async () => {
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.reply(200, { status: 'success', response: { id: 'cust_9', name: 'A B', email: 'a@b.io' } });
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: [{ first: 'A', last: 'B', email: 'a@b.io' }],
		});
		expect(result.outputs[0][0].json).toEqual({ id: 'cust_9', name: 'A B', email: 'a@b.io' });
	});

	it('refuses plain http to a remote host before sending anything, and allows it when switched on', async () => {
		const refused = await runInvoiceService({
			parameters: customerParameters(),
			items: [{ first: 'A', last: 'B', email: 'a@b.io' }],
			credentials: { baseUrl: 'http://app.example.com' },
		});
		expect(refused.error?.message).toMatch(
			/^The API key would go unencrypted to app\.example\.com \(plain http:\/\/\)/,
		);

		const scope = nock('http://app.example.com')
			.post(`${API}/create-customer`)
			.reply(200, { id: 'cust_1' });
		const allowed = await runInvoiceService({
			parameters: customerParameters(),
			items: [{ first: 'A', last: 'B', email: 'a@b.io' }],
			credentials: { baseUrl: 'http://app.example.com', allowHttp: true },
		});
		expect(allowed.error).toBeUndefined();
		expect(scope.isDone()).toBe(true);
	});
});
