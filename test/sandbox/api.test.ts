import { startSandbox, type Sandbox } from '../../sandbox/server';
import { call, customer, invoice } from './helpers';

let sb: Sandbox;
beforeAll(async () => {
	sb = await startSandbox();
});
afterAll(async () => {
	await sb.close();
});
beforeEach(() => sb.reset());

const createCustomer = (body: unknown, key: string | null = sb.apiKey) =>
	call(`${sb.baseUrl}/create-customer`, { key, body });
const createInvoice = (body: unknown, key: string | null = sb.apiKey) =>
	call(`${sb.baseUrl}/create-invoice`, { key, body });

describe('authentication', () => {
	it.each([
		['no header', null, undefined],
		['a wrong key', 'not-the-key', undefined],
		['a malformed header', null, { Authorization: `Token ${'sandbox-key-1234'}` }],
		['an empty bearer', null, { Authorization: 'Bearer ' }],
	])('rejects %s with 401 and creates nothing', async (_label, key, headers) => {
		const res = await call(`${sb.baseUrl}/create-customer`, { key, headers, body: customer(1) });
		expect(res.status).toBe(401);
		expect(res.json).toEqual({ status: 'error', message: expect.any(String) });
		expect(res.headers.get('www-authenticate')).toBe('Bearer');
		expect(sb.stats().customers).toBe(0);
	});

	it('checks the key on create-invoice as well', async () => {
		const res = await createInvoice(invoice('cust_1'), 'wrong');
		expect(res.status).toBe(401);
	});

	it('accepts any of several configured keys', async () => {
		const multi = await startSandbox({ apiKeys: ['first-key', 'second-key'] });
		try {
			expect(multi.apiKey).toBe('first-key');
			const res = await call(`${multi.baseUrl}/create-customer`, {
				key: 'second-key',
				body: customer(1),
			});
			expect(res.status).toBe(200);
		} finally {
			await multi.close();
		}
	});
});

describe('create-customer', () => {
	it('creates a customer with a counter id and a joined name', async () => {
		const a = await createCustomer(customer(1, { company_name: 'Analytical Engines Ltd' }));
		expect(a.status).toBe(200);
		expect(a.headers.get('content-type')).toMatch(/^application\/json/);
		expect(a.json).toEqual({ id: 'cust_1', name: 'Ada1 Lovelace', email: 'ada1@example.com' });
		const b = await createCustomer(customer(2));
		expect(b.json.id).toBe('cust_2');
		const [rec] = sb.records().customers;
		expect(rec).toMatchObject({
			id: 'cust_1',
			firstName: 'Ada1',
			lastName: 'Lovelace',
			companyName: 'Analytical Engines Ltd',
		});
	});

	it('serves the same routes under /version-test and with a trailing slash', async () => {
		const res = await call(`${sb.rootUrl}/version-test/api/1.1/wf/create-customer/`, {
			key: sb.apiKey,
			body: customer(7),
		});
		expect(res.status).toBe(200);
		expect(res.json.id).toBe('cust_1');
		expect(sb.stats().requests.byPath['/version-test/api/1.1/wf/create-customer/']).toBe(1);
	});

	it('answers 409 for an e-mail that exists, compared case-insensitively', async () => {
		expect((await createCustomer(customer(1))).status).toBe(200);
		const dup = await createCustomer({ ...customer(2), email: 'ADA1@Example.COM' });
		expect(dup.status).toBe(409);
		expect(dup.json).toEqual({
			status: 'error',
			message: 'A customer with this email already exists',
		});
		const s = sb.stats();
		expect(s.customers).toBe(1);
		expect(s.customersByEmail).toEqual({ 'ada1@example.com': 1 });
		expect(s.duplicateEmailRejections).toBe(1);
	});

	it.each([
		['first_name', { first_name: undefined }],
		['first_name', { first_name: '   ' }],
		['first_name', { first_name: 42 }],
		['last_name', { last_name: undefined }],
		['last_name', { last_name: '' }],
		['email', { email: undefined }],
		['email', { email: 'not-an-email' }],
		['email', { email: 'a@b' }],
		['email', { email: 'a b@example.com' }],
		['email', { email: ['a@example.com'] }],
		['company_name', { company_name: 12 }],
	])('answers 400 naming %s for %j', async (field, patch) => {
		const body: Record<string, unknown> = { ...customer(1), ...patch };
		for (const k of Object.keys(patch))
			if ((patch as Record<string, unknown>)[k] === undefined) delete body[k];
		const res = await createCustomer(body);
		expect(res.status).toBe(400);
		expect(res.json.status).toBe('error');
		expect(res.json.message).toContain(field);
		expect(sb.stats().customers).toBe(0);
	});

	it('reports every invalid field at once', async () => {
		const res = await createCustomer({ email: 'x' });
		expect(res.status).toBe(400);
		for (const f of ['first_name', 'last_name', 'email']) expect(res.json.message).toContain(f);
	});

	it('accepts a missing or null company_name', async () => {
		expect((await createCustomer({ ...customer(1), company_name: null })).status).toBe(200);
	});
});

describe('create-invoice', () => {
	beforeEach(async () => {
		await createCustomer(customer(1));
	});

	it('creates an invoice with status sent and an absolute download_url', async () => {
		const res = await createInvoice(invoice('cust_1'));
		expect(res.status).toBe(200);
		expect(res.json).toEqual({
			invoice_id: 'inv_1',
			status: 'sent',
			download_url: `${sb.rootUrl}/files/inv_1.pdf`,
		});
		expect((await createInvoice(invoice('cust_1'))).json.invoice_id).toBe('inv_2');
		expect(sb.stats().invoicesByCustomer).toEqual({ cust_1: 2 });
	});

	it('keeps extra line fields', async () => {
		const items = [{ description: 'Widget', price: 10, quantity: 3, sku: 'W-1' }];
		expect((await createInvoice(invoice('cust_1', { amount: 10, items }))).status).toBe(200);
		expect(sb.records().invoices[0].items).toEqual(items);
	});

	it('does not require amount to equal the sum of the lines, but counts the mismatch', async () => {
		const res = await createInvoice(invoice('cust_1', { amount: 999 }));
		expect(res.status).toBe(200);
		await createInvoice(invoice('cust_1'));
		expect(sb.stats().invoiceAmountMismatches).toBe(1);
	});

	it('answers 400 naming an unknown customer_id', async () => {
		const res = await createInvoice(invoice('cust_99'));
		expect(res.status).toBe(400);
		expect(res.json.message).toContain('customer_id');
		expect(res.json.message).toContain('cust_99');
		expect(sb.stats().invoices).toBe(0);
	});

	it.each([
		['customer_id', { customer_id: undefined }],
		['customer_id', { customer_id: 1 }],
		['amount', { amount: undefined }],
		['amount', { amount: '150.50' }],
		['amount', { amount: 0 }],
		['amount', { amount: -5 }],
		['amount', { amount: 10.123 }],
		['currency', { currency: undefined }],
		['currency', { currency: 'eur' }],
		['currency', { currency: 'CHF' }],
		['items', { items: undefined }],
		['items', { items: [] }],
		['items', { items: { description: 'x', price: 1 } }],
		['items[0]', { items: ['Consulting'] }],
		[
			'items[1].description',
			{
				items: [
					{ description: 'ok', price: 1 },
					{ description: '', price: 1 },
				],
			},
		],
		['items[0].description', { items: [{ price: 1 }] }],
		['items[0].price', { items: [{ description: 'x', price: '1.00' }] }],
		['items[0].price', { items: [{ description: 'x' }] }],
		['send_email', { send_email: 'yes' }],
	])('answers 400 naming %s for %j', async (field, patch) => {
		const body: Record<string, unknown> = { ...invoice('cust_1'), ...patch };
		for (const k of Object.keys(patch))
			if ((patch as Record<string, unknown>)[k] === undefined) delete body[k];
		const res = await createInvoice(body);
		expect(res.status).toBe(400);
		expect(res.json.message).toContain(field);
		expect(sb.stats().invoices).toBe(0);
	});

	it('accepts amounts with two decimals despite binary floating point (0.29, 1.15, 100.10)', async () => {
		for (const amount of [0.29, 1.15, 100.1, 19.99]) {
			expect((await createInvoice(invoice('cust_1', { amount }))).status).toBe(200);
		}
	});
});

describe('malformed requests', () => {
	it('answers 400 for invalid JSON, an empty body and a non-JSON Content-Type, and keeps serving', async () => {
		const bad = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			raw: '{"first_name": "Ada",',
		});
		expect(bad.status).toBe(400);
		expect(bad.json.message).toMatch(/Invalid JSON/);
		const empty = await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, method: 'POST' });
		expect(empty.status).toBe(400);
		const form = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			raw: 'first_name=Ada',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
		});
		expect(form.status).toBe(400);
		expect(form.json.message).toContain('Content-Type');
		const array = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: [customer(1)],
		});
		expect(array.status).toBe(400);
		expect(
			(await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) })).status,
		).toBe(200);
	});

	it('answers 413 for a body over 1 MB', async () => {
		const res = await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: { ...customer(1), pad: 'x'.repeat(1_100_000) },
		});
		expect(res.status).toBe(413);
	});

	it('answers 404 for unknown workflows (JSON) and unknown pages (HTML), 405 for GET', async () => {
		const wf = await call(`${sb.baseUrl}/delete-customer`, { key: sb.apiKey, body: {} });
		expect(wf.status).toBe(404);
		expect(wf.json.message).toContain('delete-customer');
		// Only the operations in the sandbox's table exist: no name falls through to another operation.
		for (const name of ['constructor', '__proto__', 'toString', 'create-invoice-x', '']) {
			const unknown = await call(`${sb.baseUrl}/${name}`, { key: sb.apiKey, body: {} });
			expect(unknown.status).toBe(404);
		}
		expect(sb.stats().invoices).toBe(0);
		const page = await call(`${sb.rootUrl}/api/1.1/obj/customer`);
		expect(page.status).toBe(404);
		expect(page.headers.get('content-type')).toMatch(/^text\/html/);
		const get = await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey });
		expect(get.status).toBe(405);
		expect(get.headers.get('allow')).toBe('POST');
	});
});

describe('bubble style', () => {
	let bubble: Sandbox;
	beforeAll(async () => {
		bubble = await startSandbox({ style: 'bubble' });
	});
	afterAll(async () => {
		await bubble.close();
	});

	it('wraps successes as {status:"success", response}', async () => {
		const c = await call(`${bubble.baseUrl}/create-customer`, {
			key: bubble.apiKey,
			body: customer(1),
		});
		expect(c.status).toBe(200);
		expect(c.json).toEqual({
			status: 'success',
			response: { id: 'cust_1', name: 'Ada1 Lovelace', email: 'ada1@example.com' },
		});
		const i = await call(`${bubble.baseUrl}/create-invoice`, {
			key: bubble.apiKey,
			body: invoice('cust_1'),
		});
		expect(i.json).toEqual({
			status: 'success',
			response: {
				invoice_id: 'inv_1',
				status: 'sent',
				download_url: `${bubble.rootUrl}/files/inv_1.pdf`,
			},
		});
	});

	it('uses the Bubble shapes for 401, 400 and 404; 409 keeps {status:"error", message}', async () => {
		const unauth = await call(`${bubble.baseUrl}/create-customer`, {
			key: 'wrong',
			body: customer(2),
		});
		expect(unauth.status).toBe(401);
		expect(unauth.json).toMatchObject({
			error_class: 'Unauthorized',
			translation: expect.any(String),
		});

		const invalid = await call(`${bubble.baseUrl}/create-customer`, {
			key: bubble.apiKey,
			body: { ...customer(2), email: 'nope' },
		});
		expect(invalid.status).toBe(400);
		expect(invalid.json).toEqual({
			statusCode: 400,
			body: { status: 'ERROR', message: expect.stringContaining('email') },
		});

		const missing = await call(`${bubble.baseUrl}/create-wat`, { key: bubble.apiKey, body: {} });
		expect(missing.status).toBe(404);
		expect(missing.json).toEqual({
			statusCode: 404,
			body: { status: 'NOT_FOUND', message: expect.stringContaining('create-wat') },
		});

		await call(`${bubble.baseUrl}/create-customer`, { key: bubble.apiKey, body: customer(3) });
		const dup = await call(`${bubble.baseUrl}/create-customer`, {
			key: bubble.apiKey,
			body: customer(3),
		});
		expect(dup.status).toBe(409);
		expect(dup.json).toEqual({
			status: 'error',
			message: 'A customer with this email already exists',
		});
	});
});
