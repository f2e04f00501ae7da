// n8n's SSRF protection refusing an address is n8n's decision, not a network fault: the node recognises n8n's
// own error (by its class name, as @n8n/backend-network names it; never by its message), does not retry, does
// not call it a broken connection or an unknown outcome, and names the address and the settings that allow it.
// Here the refusal is a fake shaped like n8n's SsrfBlockedIpError (name, ip); test/e2e/ssrf.test.ts has the
// real one in a real n8n with the protection on.
import nock from 'nock';

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
const BLOCKED_TEXT = 'The request was blocked because it resolves to a restricted IP address';
/** What n8n 2.x throws: `class SsrfBlockedIpError extends UserError`, name and ip set, no error code. */
const ssrfBlocked = (ip: string) =>
	Object.assign(new Error(BLOCKED_TEXT), { name: 'SsrfBlockedIpError', ip });

afterEach(() => nock.cleanAll());

test('a create refused by SSRF protection is an ordinary item error: not retried, not "outcome unknown", on the error output', async () => {
	const scope = nock(ORIGIN)
		.post(`${API}/create-customer`)
		.replyWithError(ssrfBlocked('10.0.0.7'))
		.post(`${API}/create-customer`)
		.reply(200, { id: 'cust_never' });
	const result = await runInvoiceService({
		parameters: customerParameters(),
		items: [ADA],
		onError: 'continueErrorOutput',
	});

	expect(nock.pendingMocks()).toHaveLength(1);
	expect(scope.isDone()).toBe(false);
	expect(result.outputs[0]).toEqual([]);
	const [item] = result.outputs[1];
	expect(item.pairedItem).toEqual({ item: 0 });
	const error = item.json.error as { message: string; description: string };
	expect(error.message).toBe(
		"n8n's SSRF protection refused the address app.example.com (10.0.0.7)",
	);
	expect(error.description).toMatch(/^Nothing was sent to create-customer\. /);
	expect(error.description).toContain('N8N_SSRF_ALLOWED_HOSTNAMES=app.example.com');
	expect(error.description).toContain('N8N_SSRF_ALLOWED_IP_RANGES=10.0.0.7/32');
	expect(`${error.message} ${error.description}`).not.toMatch(
		/outcome unknown|connection .* broke/i,
	);
	expect(everythingVisible(result)).not.toContain(API_KEY);
});

test('a PDF download refused by SSRF protection says the invoice was created, and is not retried', async () => {
	nock(ORIGIN).post(`${API}/create-invoice`).reply(200, {
		invoice_id: 'inv_1',
		status: 'sent',
		download_url: 'https://files.example.net/inv_1.pdf',
	});
	const file = nock('https://files.example.net')
		.get('/inv_1.pdf')
		.replyWithError(ssrfBlocked('fd00::7'))
		.get('/inv_1.pdf')
		.reply(200, '%PDF-1.7\n');
	const result = await runInvoiceService({
		parameters: invoiceParameters({ options: { downloadPdf: true } }),
	});

	expect(file.pendingMocks()).toHaveLength(1);
	expect(result.error?.message).toBe(
		"Invoice inv_1 was created, but its PDF could not be downloaded: n8n's SSRF protection refused the address files.example.net (fd00::7)",
	);
	expect(result.error?.description).toContain('N8N_SSRF_ALLOWED_HOSTNAMES=files.example.net');
	expect(result.error?.description).toContain('N8N_SSRF_ALLOWED_IP_RANGES=fd00::7/128');
	expect(result.error?.description).toContain('it only downloads the PDF');
});

test("the same words without n8n's error class are a network fault as before (the message text is not matched)", async () => {
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.replyWithError(Object.assign(new Error(BLOCKED_TEXT), { ip: '10.0.0.7' }));
	const result = await runInvoiceService({ parameters: customerParameters(), items: [ADA] });
	expect(result.error?.message).toMatch(
		/^The connection to app\.example\.com broke .*: outcome unknown$/,
	);
});
