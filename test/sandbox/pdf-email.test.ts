/* eslint-disable @n8n/community-nodes/no-restricted-imports */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { call, customer, invoice, pdfDrawsText } from './helpers';

async function download(url: string, headers: Record<string, string> = {}) {
	const res = await fetch(url, { headers });
	return {
		status: res.status,
		type: res.headers.get('content-type'),
		body: Buffer.from(await res.arrayBuffer()),
	};
}

describe('PDF at the same origin', () => {
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await startSandbox();
	});
	afterAll(async () => {
		await sb.close();
	});

	it('serves a real PDF with the invoice id, customer, lines and total, generated once and cached', async () => {
		await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: customer(1, { company_name: 'Analytical Engines Ltd' }),
		});
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1'),
		});
		expect(sb.stats().pdf.generated).toBe(0); // lazy: nothing rendered until the first download

		const pdf = await download(inv.json.download_url);
		expect(pdf.status).toBe(200);
		expect(pdf.type).toBe('application/pdf');
		expect(pdf.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');

		const doc = await PDFDocument.load(pdf.body);
		expect(doc.getPageCount()).toBe(1);
		expect(doc.getTitle()).toBe('Invoice inv_1');
		for (const text of [
			'Invoice inv_1',
			'Ada1 Lovelace',
			'ada1@example.com',
			'Company: Analytical Engines Ltd',
			'Consulting',
			'100.00',
			'Travel',
			'50.50',
			'Total excl. VAT',
			'150.50 EUR',
		]) {
			expect({ text, drawn: pdfDrawsText(pdf.body, text) }).toEqual({ text, drawn: true });
		}
		expect(pdfDrawsText(pdf.body, 'Invoice inv_2')).toBe(false);

		const again = await download(inv.json.download_url);
		expect(again.body.equals(pdf.body)).toBe(true);
		expect(sb.stats().pdf).toEqual({ generated: 1, downloads: 2, downloadsWithAuthorization: 0 });
	});

	it('accepts downloads without a key and counts those that carry one', async () => {
		sb.reset();
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1'),
		});
		expect(
			(await download(inv.json.download_url, { Authorization: `Bearer ${sb.apiKey}` })).status,
		).toBe(200);
		expect(sb.stats().pdf.downloadsWithAuthorization).toBe(1);
		expect(sb.stats().authHeadersSeenAtPdfHost).toEqual([]);
	});

	it('answers 404 for an unknown file', async () => {
		const res = await download(`${sb.rootUrl}/files/inv_999.pdf`);
		expect(res.status).toBe(404);
	});

	it('renders many lines over several pages and survives characters Helvetica cannot draw', async () => {
		sb.reset();
		await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: { first_name: 'Łukasz', last_name: '山田 😀', email: 'l@example.com' },
		});
		const items = Array.from({ length: 80 }, (_, i) => ({
			description: `Line ${i + 1} ${'very long text '.repeat(i % 3 ? 1 : 20)}`,
			price: 1,
		}));
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: { customer_id: 'cust_1', amount: 80, currency: 'GBP', items },
		});
		expect(inv.status).toBe(200);
		const pdf = await download(inv.json.download_url);
		expect(pdf.status).toBe(200);
		const doc = await PDFDocument.load(pdf.body);
		expect(doc.getPageCount()).toBeGreaterThan(1);
		expect(pdfDrawsText(pdf.body, 'Line 80')).toBe(true);
	});
});

describe('PDF at another origin', () => {
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await startSandbox({ pdfOrigin: 'other' });
	});
	afterAll(async () => {
		await sb.close();
	});

	it('puts download_url on a second port and records Authorization headers sent there', async () => {
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		const inv = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1'),
		});
		const url = new URL(inv.json.download_url);
		expect(url.origin).toBe(sb.pdfRootUrl);
		expect(url.port).not.toBe(new URL(sb.rootUrl).port);

		expect((await download(url.href)).status).toBe(200);
		expect(sb.stats().authHeadersSeenAtPdfHost).toEqual([]);
		expect((await download(url.href, { Authorization: `Bearer ${sb.apiKey}` })).status).toBe(200);
		expect(sb.stats().authHeadersSeenAtPdfHost).toEqual([`Bearer ${sb.apiKey}`]);

		// The main origin does not serve files in this mode, and the PDF host serves nothing else.
		expect((await download(`${sb.rootUrl}/files/inv_1.pdf`)).status).toBe(404);
		expect(
			(
				await call(`${sb.pdfRootUrl}/api/1.1/wf/create-customer`, {
					key: sb.apiKey,
					body: customer(2),
				})
			).status,
		).toBe(404);
	});
});

describe('send_email', () => {
	let sb: Sandbox;
	let outbox: string;
	beforeAll(async () => {
		outbox = mkdtempSync(join(tmpdir(), 'sandbox-test-outbox-'));
		sb = await startSandbox({ outboxDir: outbox });
	});
	afterAll(async () => {
		await sb.close();
		rmSync(outbox, { recursive: true, force: true });
	});

	it('writes a MIME message with a text part and the PDF attached, before answering', async () => {
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		const res = await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1', { send_email: true }),
		});
		expect(res.status).toBe(200);
		expect(sb.outboxDir).toBe(outbox);
		const file = join(outbox, 'inv_1.eml');
		const eml = readFileSync(file, 'utf8');
		const [head, ...rest] = eml.split('\r\n\r\n');
		expect(head).toMatch(/^To: .*<ada1@example\.com>$/m);
		expect(head).toMatch(/^Subject: Invoice inv_1$/m);
		expect(head).toMatch(/^MIME-Version: 1\.0$/m);
		const boundary = /boundary="([^"]+)"/.exec(head)![1];
		const parts = rest.join('\r\n\r\n').split(`--${boundary}`);
		expect(parts[parts.length - 1].trim()).toBe('--');
		const text = parts.find((p) => p.includes('Content-Type: text/plain'))!;
		expect(text).toContain('inv_1');
		const att = parts.find((p) => p.includes('Content-Type: application/pdf'))!;
		expect(att).toMatch(/Content-Disposition: attachment; filename="inv_1\.pdf"/);
		expect(att).toMatch(/Content-Transfer-Encoding: base64/);
		const pdf = Buffer.from(att.split('\r\n\r\n')[1].replace(/\s+/g, ''), 'base64');
		expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
		expect((await PDFDocument.load(pdf)).getTitle()).toBe('Invoice inv_1');

		// The downloaded PDF is the very file that was mailed.
		const downloaded = Buffer.from(await (await fetch(res.json.download_url)).arrayBuffer());
		expect(downloaded.equals(pdf)).toBe(true);
		expect(sb.stats().emailsWritten).toBe(1);
	});

	it('writes nothing without send_email, and reset removes the files it wrote', async () => {
		sb.reset();
		expect(readdirSync(outbox)).toEqual([]);
		await call(`${sb.baseUrl}/create-customer`, { key: sb.apiKey, body: customer(1) });
		await call(`${sb.baseUrl}/create-invoice`, { key: sb.apiKey, body: invoice('cust_1') });
		await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1', { send_email: false }),
		});
		expect(readdirSync(outbox)).toEqual([]);
		await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1', { send_email: true }),
		});
		expect(readdirSync(outbox)).toEqual(['inv_3.eml']);
		sb.reset();
		expect(existsSync(join(outbox, 'inv_3.eml'))).toBe(false);
	});

	it('encodes non-ASCII names in the To header', async () => {
		sb.reset();
		await call(`${sb.baseUrl}/create-customer`, {
			key: sb.apiKey,
			body: {
				first_name: 'Zoë',
				last_name: 'Ünal\r\nBcc: evil@example.com',
				email: 'zoe@example.com',
			},
		});
		await call(`${sb.baseUrl}/create-invoice`, {
			key: sb.apiKey,
			body: invoice('cust_1', { send_email: true }),
		});
		const eml = readFileSync(join(outbox, 'inv_1.eml'), 'utf8');
		const head = eml.split('\r\n\r\n')[0];
		expect(head).toMatch(/^To: "=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=" <zoe@example\.com>$/m);
		expect(head).not.toMatch(/^Bcc:/m);
	});
});
