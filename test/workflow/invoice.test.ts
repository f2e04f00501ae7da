import nock from 'nock';

import { getBinaryBuffer } from '../support/harness/run-node';
import {
	API,
	API_KEY,
	ORIGIN,
	everythingVisible,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

afterEach(() => nock.cleanAll());

function captureInvoice(
	reply: (body: Record<string, unknown>) => [number, unknown] = () => [
		200,
		{ invoice_id: 'inv_1', status: 'sent', download_url: `${ORIGIN}/files/inv_1.pdf` },
	],
) {
	const bodies: Array<Record<string, unknown>> = [];
	const scope = nock(ORIGIN)
		.post(`${API}/create-invoice`)
		.reply(function (_uri, body) {
			expect(this.req.headers.authorization).toBe(`Bearer ${API_KEY}`);
			bodies.push(body as Record<string, unknown>);
			return reply(body as Record<string, unknown>);
		});
	return { bodies, scope };
}

describe('Invoice → Create inside a real workflow run', () => {
	it('sends the exact sum of the lines in cents (100.1 + 0.2 = 100.3) and outputs the invoice', async () => {
		const { bodies, scope } = captureInvoice();
		const result = await runInvoiceService({ parameters: invoiceParameters() });

		expect(result.error).toBeUndefined();
		expect(scope.isDone()).toBe(true);
		expect(bodies[0]).toEqual({
			customer_id: 'cust_7',
			amount: 100.3,
			currency: 'EUR',
			items: [
				{ description: 'Consulting', price: 100.1 },
				{ description: 'Travel', price: 0.2 },
			],
		});
		expect(result.outputs[0]).toEqual([
			{
				json: { invoice_id: 'inv_1', status: 'sent', download_url: `${ORIGIN}/files/inv_1.pdf` },
				pairedItem: { item: 0 },
			},
		]);
	});

	it('0.1 + 0.2 is sent as 0.3', async () => {
		const { bodies } = captureInvoice();
		await runInvoiceService({
			parameters: invoiceParameters({
				lineItems: {
					item: [
						{ description: 'a', price: 0.1 },
						{ description: 'b', price: 0.2 },
					],
				},
			}),
		});
		expect(bodies[0].amount).toBe(0.3);
	});

	it('takes lines as JSON from an upstream expression and keeps extra line fields', async () => {
		const { bodies } = captureInvoice();
		const result = await runInvoiceService({
			parameters: invoiceParameters({
				customerId: '={{ $json.customer }}',
				currency: '={{ $json.currency }}',
				lineItemsMode: 'json',
				lineItemsJson: '={{ $json.lines }}',
			}),
			items: [
				{
					customer: 'cust_12',
					currency: 'GBP',
					lines: [
						{ description: 'Widget', price: '19.99', quantity: 3, sku: 'W-1' },
						{ description: 'Discount', price: -5 },
					],
				},
			],
		});
		expect(result.error).toBeUndefined();
		expect(bodies[0]).toEqual({
			customer_id: 'cust_12',
			amount: 14.99,
			currency: 'GBP',
			items: [
				{ description: 'Widget', price: 19.99, quantity: 3, sku: 'W-1' },
				{ description: 'Discount', price: -5 },
			],
		});
	});

	it('accepts lines as a JSON string', async () => {
		const { bodies } = captureInvoice();
		await runInvoiceService({
			parameters: invoiceParameters({
				lineItemsMode: 'json',
				lineItemsJson: '[{"description":"Support","price":12.5}]',
			}),
		});
		expect(bodies[0]).toMatchObject({
			amount: 12.5,
			items: [{ description: 'Support', price: 12.5 }],
		});
	});

	it('sends a custom amount instead of the sum when asked', async () => {
		const { bodies } = captureInvoice();
		await runInvoiceService({
			parameters: invoiceParameters({ amountMode: 'custom', amount: 250 }),
		});
		expect(bodies[0].amount).toBe(250);
	});

	it('sends send_email only when the user set it', async () => {
		const on = captureInvoice();
		await runInvoiceService({ parameters: invoiceParameters({ options: { sendEmail: true } }) });
		expect(on.bodies[0].send_email).toBe(true);
		nock.cleanAll();
		const off = captureInvoice();
		await runInvoiceService({ parameters: invoiceParameters({ options: { sendEmail: false } }) });
		expect(off.bodies[0].send_email).toBe(false);
		nock.cleanAll();
		const unset = captureInvoice();
		await runInvoiceService({ parameters: invoiceParameters() });
		expect(unset.bodies[0]).not.toHaveProperty('send_email');
	});
});

describe('Invoice PDF as a file', () => {
	it('downloads the PDF from the service origin with the key and attaches it as binary', async () => {
		captureInvoice();
		const file = nock(ORIGIN)
			.get('/files/inv_1.pdf')
			.matchHeader('authorization', `Bearer ${API_KEY}`)
			.reply(200, PDF, { 'content-type': 'application/pdf' });

		const result = await runInvoiceService({
			parameters: invoiceParameters({ options: { downloadPdf: true } }),
		});

		expect(result.error).toBeUndefined();
		expect(file.isDone()).toBe(true);
		const [item] = result.outputs[0];
		expect(item.binary?.data).toMatchObject({ fileName: 'inv_1.pdf', mimeType: 'application/pdf' });
		expect((await getBinaryBuffer(item, 'data')).equals(PDF)).toBe(true);
	});

	it('never sends the key to a download URL on another host', async () => {
		captureInvoice(() => [
			200,
			{ invoice_id: 'inv_2', status: 'sent', download_url: 'https://files.example.net/inv_2.pdf' },
		]);
		let authorization: string | undefined = 'not called';
		nock('https://files.example.net')
			.get('/inv_2.pdf')
			.reply(function () {
				authorization = this.req.headers.authorization;
				return [200, PDF, { 'content-type': 'application/pdf' }];
			});

		const result = await runInvoiceService({
			parameters: invoiceParameters({
				options: { downloadPdf: true, binaryPropertyName: 'invoicePdf' },
			}),
		});

		expect(result.error).toBeUndefined();
		expect(authorization).toBeUndefined();
		expect(result.outputs[0][0].binary?.invoicePdf?.fileName).toBe('inv_2.pdf');
	});

	it('says the invoice exists when what came back is not a PDF', async () => {
		captureInvoice();
		nock(ORIGIN)
			.get('/files/inv_1.pdf')
			.reply(200, '<html>login</html>', { 'content-type': 'text/html' });
		const result = await runInvoiceService({
			parameters: invoiceParameters({ options: { downloadPdf: true } }),
		});
		expect(result.error?.message).toMatch(
			/^Invoice inv_1 was created, but its PDF could not be downloaded: what came back is not a PDF \(content type text\/html/,
		);
		expect(result.error?.description).toMatch(
			/Retry the failed execution .* it only downloads the PDF/,
		);
	});

	it('says the invoice exists when the download fails', async () => {
		captureInvoice();
		nock(ORIGIN).get('/files/inv_1.pdf').reply(404, 'gone');
		const result = await runInvoiceService({
			parameters: invoiceParameters({ options: { downloadPdf: true } }),
			onError: 'continueErrorOutput',
		});
		const [errorItem] = result.outputs[1];
		expect((errorItem.json.error as { message: string }).message).toMatch(
			/^Invoice inv_1 was created, but its PDF could not be downloaded: https:\/\/app\.example\.com\/files\/inv_1\.pdf answered HTTP 404$/,
		);
		expect(errorItem.pairedItem).toEqual({ item: 0 });
		// The invoice is there: no resend code, no "if the record is not there" (issue 52).
		const { description } = errorItem.json.error as { description: string };
		expect(description).toMatch(/it only downloads the PDF/);
		expect(description).not.toMatch(/record is not there|Resend Unknown Outcomes Of/);
		expect(everythingVisible(result)).not.toContain(API_KEY);
	});
});
