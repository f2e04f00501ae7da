// The packed package installed as a community node in a real n8n (both supported majors), running the
// workflows of examples/ against the local sandbox service. One n8n home and one import per n8n version;
// each workflow is one `n8n execute` (a boot costs 7-11 s).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	loadExample,
	nodeError,
	nodeOutput,
	nodesThatRan,
	outputJson,
	packPackage,
	prepareWorkflow,
	readBinary,
	removeHome,
	runWorkflows,
	type CredentialImport,
	type N8nHome,
	type RunWorkflowsResult,
	type WorkflowResult,
} from '../../tools/n8n';

/** The message of an error item: `{ error: { message, description, httpCode } }`. */
const errorMessage = (item: { json: Record<string, unknown> }) =>
	(item.json.error as { message?: string })?.message;

const MINUTE = 60_000;

type Wf = Record<string, unknown> & { nodes: Array<Record<string, unknown>> };

/** An e-mail made unique per run by the examples: `<name>+<execution id or time>@example.com`. */
const perRun = (name: string) => new RegExp(`^${name.replace('.', '\\.')}\\+\\d+@example\\.com$`);

/** Sets an assignment of an Edit Fields (Set) node in "manual" mode. */
function setAssignment(wf: Wf, nodeName: string, field: string, value: string): Wf {
	const node = wf.nodes.find((n) => n.name === nodeName);
	const params = node?.parameters as
		| { assignments?: { assignments?: Array<{ name: string; value: unknown }> } }
		| undefined;
	const a = params?.assignments?.assignments?.find((x) => x.name === field);
	if (!a) throw new Error(`no assignment ${field} in node ${nodeName}`);
	a.value = value;
	return wf;
}

function describeRun(r: WorkflowResult): string {
	return `exit ${r.code}, nodes ran: ${nodesThatRan(r.run).join(', ')}\nstdout tail:\n${r.stdout.slice(-2500)}\nstderr tail:\n${r.stderr.slice(-1500)}`;
}

describe.each(N8N_VERSIONS)('Invoice Service node in a real n8n %s', (version) => {
	let home: N8nHome;
	let plain: Sandbox; // plain JSON answers, the shared sandbox of most workflows
	let bubble: Sandbox; // Bubble-style envelopes, reached through /version-test/api/1.1/wf
	let otherOrigin: Sandbox; // PDFs served from another origin
	let limited: Sandbox; // a rate limit of 4 creates per second (429 beyond it)
	let outbox: string;
	let batch: RunWorkflowsResult;

	/** Options → Send Email on in the "Create invoice" node of a copy of the first example. */
	const sendEmailOn = (wf: Wf): Wf => {
		const node = wf.nodes.find((n) => n.name === 'Create invoice')!;
		const parameters = node.parameters as { options: Record<string, unknown> };
		parameters.options = { ...parameters.options, sendEmail: true };
		return wf;
	};
	let tarball: string;

	const cred = (id: string, name: string, data: Record<string, unknown>): CredentialImport => ({
		id,
		name,
		type: CREDENTIAL_TYPE,
		data: { allowHttp: true, ...data },
	});

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		tarball = await packPackage();
		outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-e2e-outbox-'));
		plain = await startSandbox({ outboxDir: outbox });
		bubble = await startSandbox({ style: 'bubble' });
		otherOrigin = await startSandbox({ pdfOrigin: 'other' });
		limited = await startSandbox({ rateLimit: { perSecond: 4, burst: 4 } });
		home = await createN8nHome(version, tarball);

		const credentials = [
			cred('credPlain0000001', 'Sandbox (plain)', { baseUrl: plain.rootUrl, apiKey: plain.apiKey }),
			cred('credBadKey000001', 'Sandbox (wrong key)', {
				baseUrl: plain.baseUrl,
				apiKey: 'not-the-right-key',
			}),
			cred('credBubble000001', 'Sandbox (bubble)', {
				baseUrl: `${bubble.rootUrl}/version-test/api/1.1/wf`,
				apiKey: bubble.apiKey,
			}),
			cred('credOther0000001', 'Sandbox (PDF elsewhere)', {
				baseUrl: otherOrigin.baseUrl,
				apiKey: otherOrigin.apiKey,
			}),
			cred('credLimited00001', 'Sandbox (rate limit)', {
				baseUrl: limited.rootUrl,
				apiKey: limited.apiKey,
			}),
		];
		const use = (id: string) => {
			const c = credentials.find((x) => x.id === id)!;
			return { id: c.id, name: c.name };
		};
		const invoicePdf = loadExample('new-customer-invoice-pdf.json');
		const workflows = [
			prepareWorkflow(invoicePdf, { id: 'e2eInvoicePdf', credential: use('credPlain0000001') }),
			// The same example with Options → Send Email switched on (the example leaves it off).
			sendEmailOn(
				prepareWorkflow(invoicePdf, {
					id: 'e2eSendEmail',
					credential: use('credPlain0000001'),
				}) as Wf,
			),
			prepareWorkflow(loadExample('customer-error-output.json'), {
				id: 'e2eErrorOutput',
				credential: use('credPlain0000001'),
			}),
			// The same workflow again: its e-mails are new in each run, so it goes the same way again.
			prepareWorkflow(loadExample('customer-error-output.json'), {
				id: 'e2eErrorOutput2',
				credential: use('credPlain0000001'),
			}),
			prepareWorkflow(loadExample('invoice-from-json-lines.json'), {
				id: 'e2eJsonLines',
				credential: use('credPlain0000001'),
			}),
			setAssignment(
				prepareWorkflow(invoicePdf, { id: 'e2eBadKey', credential: use('credBadKey000001') }) as Wf,
				'Sample customer',
				'email',
				'bad.key@example.com',
			),
			prepareWorkflow(invoicePdf, { id: 'e2eBubble', credential: use('credBubble000001') }),
			prepareWorkflow(invoicePdf, { id: 'e2eOtherOrigin', credential: use('credOther0000001') }),
			prepareWorkflow(loadExample('bulk-import-invoices.json'), {
				id: 'e2eBulkImport',
				credential: use('credLimited00001'),
			}),
		];
		batch = await runWorkflows(home, { credentials, workflows });
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all([plain?.close(), bubble?.close(), otherOrigin?.close(), limited?.close()]);
		if (home) removeHome(home);
		if (outbox) fs.rmSync(outbox, { recursive: true, force: true });
	});

	test('the tarball holds only what users need: dist/ (code, types, maps, icons, codex, output schemas), README, LICENSE, package.json', () => {
		const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
			.trim()
			.split('\n')
			.map((file) => file.replace(/^package\//, ''));
		const shipped =
			/^(README\.md|LICENSE\.md|package\.json|dist\/(nodes|credentials)\/.+\.(js|d\.ts|js\.map|svg|node\.json)|dist\/nodes\/InvoiceService\/__schema__\/v\d+\.\d+\.\d+\/\w+\/\w+\.json)$/;
		expect(files.filter((file) => !shipped.test(file))).toEqual([]);
		expect(files).toContain('dist/nodes/InvoiceService/InvoiceService.node.js');
		expect(files).toContain('dist/credentials/InvoiceServiceApi.credentials.js');
		expect(files).toContain('dist/nodes/InvoiceService/__schema__/v1.0.0/invoice/create.json');
	});

	test('creates the customer, then a two-line invoice whose amount is the sum (100.10 + 0.20)', () => {
		const r = batch.results.e2eInvoicePdf;
		expect({ code: r.code, ran: nodesThatRan(r.run) }).toEqual({
			code: 0,
			ran: expect.arrayContaining(['Create customer', 'Create invoice']),
		});
		const [customer] = outputJson(r.run, 'Create customer');
		expect(customer).toMatchObject({
			id: expect.stringMatching(/^cust_\d+$/),
			name: 'Ada Lovelace',
			email: expect.stringMatching(perRun('ada.lovelace')),
		});
		const [invoice] = outputJson(r.run, 'Create invoice');
		expect(invoice).toMatchObject({
			invoice_id: expect.stringMatching(/^inv_\d+$/),
			status: 'sent',
			download_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\/inv_\d+\.pdf$/),
		});
		const stored = plain.records().invoices.find((i) => i.id === invoice.invoice_id);
		expect(stored).toMatchObject({
			customerId: customer.id,
			amount: 100.3,
			currency: 'EUR',
			sendEmail: false,
			items: [
				expect.objectContaining({ description: 'Consulting, November', price: 100.1 }),
				expect.objectContaining({ description: 'Postage', price: 0.2 }),
			],
		});
		const storedCustomer = plain.records().customers.find((c) => c.id === customer.id);
		expect(storedCustomer).toMatchObject({ companyName: 'Analytical Engines Ltd' });
	});

	// n8n 2.x keeps binary data on the filesystem by default (<user folder>/.n8n/storage, the folder n8n 3
	// keeps); 1.x keeps it in memory (inline base64), a mode n8n 3 removes.
	test('the PDF arrives as binary "data" (application/pdf, inv_<n>.pdf), stored byte for byte as the service serves it; no e-mail is sent', async () => {
		const r = batch.results.e2eInvoicePdf;
		const [item] = nodeOutput(r.run, 'Create invoice');
		const invoiceId = item.json.invoice_id as string;
		const ref = item.binary?.data;
		expect(ref).toMatchObject({ mimeType: 'application/pdf', fileName: `${invoiceId}.pdf` });
		expect(ref?.id ?? 'inline').toMatch(version.startsWith('1.') ? /^inline$/ : /^filesystem-v2:/);
		const bytes = readBinary(home, ref!);
		const served = await fetch(item.json.download_url as string);
		expect(bytes.equals(Buffer.from(await served.arrayBuffer()))).toBe(true);
		expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
		expect(bytes.length).toBeGreaterThan(500);
		expect(fs.existsSync(path.join(outbox, `${invoiceId}.eml`))).toBe(false);
	});

	test('each run of the first example is a new customer (its e-mail is unique per run): no 409 on the second run', () => {
		const emails = ['e2eInvoicePdf', 'e2eSendEmail'].map(
			(id) => outputJson(batch.results[id].run, 'Create customer')[0]?.email,
		);
		expect(emails).toEqual([
			expect.stringMatching(perRun('ada.lovelace')),
			expect.stringMatching(perRun('ada.lovelace')),
		]);
		expect(new Set(emails).size).toBe(2);
	});

	test('with Send Email on, the service mails the invoice to the customer', () => {
		const r = batch.results.e2eSendEmail;
		expect(r.code).toBe(0);
		const [customer] = outputJson(r.run, 'Create customer');
		const [invoice] = outputJson(r.run, 'Create invoice');
		expect(plain.records().invoices.find((i) => i.id === invoice.invoice_id)).toMatchObject({
			sendEmail: true,
		});
		const eml = path.join(outbox, `${invoice.invoice_id as string}.eml`);
		expect(fs.readFileSync(eml, 'utf8')).toContain(customer.email as string);
	});

	/** The error-output example's run: the e-mails it created, the one refused, and where the refusal went. */
	function duplicateRun(id: string) {
		const r = batch.results[id];
		expect(r.code).toBe(0);
		const created = outputJson(r.run, 'Create customer', 0).map((c) => c.email as string);
		const failed = nodeOutput(r.run, 'Create customer', 1);
		return { r, created, failed };
	}

	test('a duplicate e-mail goes to the error output with the 409 message, and on through the 409 branch with its reason; the others are created', () => {
		const { r, created, failed } = duplicateRun('e2eErrorOutput');
		expect(created.sort()).toEqual([
			expect.stringMatching(perRun('alan.turing')),
			expect.stringMatching(perRun('grace.hopper')),
		]);
		const grace = created.find((email) => email.startsWith('grace.'))!;
		expect(failed).toHaveLength(1);
		expect(errorMessage(failed[0])).toBe(`A customer with the e-mail ${grace} already exists`);
		expect((failed[0].json.error as { httpCode?: string }).httpCode).toBe('409');
		// Items 0 and 2 carry the same e-mail; whichever reached the service second is the one that failed.
		const failedIndex = (failed[0].pairedItem as { item: number }).item;
		expect([0, 2]).toContain(failedIndex);
		const pairedCreated = nodeOutput(r.run, 'Create customer', 0).map(
			(i) => (i.pairedItem as { item: number }).item,
		);
		expect(pairedCreated.sort()).toEqual([0, 1, 2].filter((i) => i !== failedIndex));
		expect(outputJson(r.run, 'Not created (already exists)')).toEqual([
			{ email: grace, reason: `A customer with the e-mail ${grace} already exists` },
		]);
		expect(nodesThatRan(r.run)).not.toContain('Not created (other failure)');
		expect(outputJson(r.run, 'Created')).toHaveLength(2);
		expect(plain.stats().customersByEmail[grace]).toBe(1);
	});

	test('a second run of the same example makes new e-mails: two created, the duplicate refused again', () => {
		const first = duplicateRun('e2eErrorOutput');
		const second = duplicateRun('e2eErrorOutput2');
		expect(second.created).toHaveLength(2);
		expect(second.failed).toHaveLength(1);
		expect(second.created.filter((email) => first.created.includes(email))).toEqual([]);
		expect(outputJson(second.r.run, 'Not created (already exists)')).toHaveLength(1);
		for (const email of [...first.created, ...second.created])
			expect(plain.stats().customersByEmail[email]).toBe(1);
	});

	test('line items from a JSON expression (lineItemsMode json) become the invoice lines', () => {
		const r = batch.results.e2eJsonLines;
		expect(r.code).toBe(0);
		const [invoice] = outputJson(r.run, 'Create invoice');
		expect(invoice.invoice_id).toMatch(/^inv_\d+$/);
		const stored = plain.records().invoices.find((i) => i.id === invoice.invoice_id);
		expect(stored).toMatchObject({
			amount: 25.1,
			currency: 'USD',
			sendEmail: false,
			items: [
				expect.objectContaining({ description: 'Trajectory analysis', price: 19.99, quantity: 1 }),
				expect.objectContaining({ description: 'Launch window review', price: 5.01 }),
				expect.objectContaining({ description: 'Paper tape', price: 0.1 }),
			],
		});
		expect(nodeOutput(r.run, 'Create invoice')[0].binary).toBeUndefined();
	});

	test("the bulk import: 12 rows become 12 customers and 12 invoices at the service's rate limit (429s waited out, none lost, none twice)", () => {
		const r = batch.results.e2eBulkImport;
		expect(r.code).toBe(0);
		const invoiced = outputJson(r.run, 'Invoiced');
		expect(invoiced).toHaveLength(12);
		expect(nodesThatRan(r.run)).not.toContain('Customer not created');
		expect(nodesThatRan(r.run)).not.toContain('Invoice not created');
		const { customers, invoices } = limited.records();
		expect(customers).toHaveLength(12);
		expect(invoices).toHaveLength(12);
		expect(new Set(invoices.map((i) => i.customerId)).size).toBe(12);
		expect(Object.values(limited.stats().customersByEmail)).toEqual(Array(12).fill(1));
		expect(invoices.map((i) => i.amount).sort((a, b) => a - b)).toEqual([
			12.34, 15.25, 33.3, 42, 60, 77, 80.5, 99.99, 120, 205, 250, 310.1,
		]);
		// 24 creates at 4 a second, 5 at a time: the service said "slow down" and the node waited.
		expect(limited.stats().faults.rateLimited).toBeGreaterThan(0);
	});

	test('a wrong API key fails the run with the 401 message', () => {
		const r = batch.results.e2eBadKey;
		expect(r.code).toBe(1);
		const err = nodeError(r.run, 'Create customer');
		expect(err?.message).toMatch(/API key/);
		expect(err?.message).toMatch(/rejected/);
		expect(`${err?.message} ${err?.description ?? ''}`).toMatch(/check the .*credential/i);
		expect(nodesThatRan(r.run)).not.toContain('Create invoice');
		expect(plain.stats().customersByEmail['bad.key@example.com']).toBeUndefined();
	});

	test('the Bubble response style (version-test base URL) works end to end', () => {
		const r = batch.results.e2eBubble;
		expect(r.code).toBe(0);
		const [customer] = outputJson(r.run, 'Create customer');
		expect(customer).toMatchObject({
			id: expect.stringMatching(/^cust_\d+$/),
			name: 'Ada Lovelace',
		});
		const [item] = nodeOutput(r.run, 'Create invoice');
		expect(item.json).toMatchObject({
			invoice_id: expect.stringMatching(/^inv_\d+$/),
			status: 'sent',
		});
		expect(readBinary(home, item.binary!.data).subarray(0, 5).toString('latin1')).toBe('%PDF-');
		expect(bubble.records().invoices[0]).toMatchObject({ amount: 100.3 });
		expect(bubble.stats().requests.byPath).toEqual(
			expect.objectContaining({ '/version-test/api/1.1/wf/create-customer': 1 }),
		);
	});

	test('with the PDF on another origin, no Authorization header reaches the PDF host', () => {
		const r = batch.results.e2eOtherOrigin;
		expect(r.code).toBe(0);
		const [item] = nodeOutput(r.run, 'Create invoice');
		expect(otherOrigin.pdfRootUrl).not.toBe(otherOrigin.rootUrl);
		expect(item.json.download_url).toMatch(
			new RegExp(`^${otherOrigin.pdfRootUrl}/files/inv_\\d+\\.pdf$`),
		);
		expect(readBinary(home, item.binary!.data).subarray(0, 5).toString('latin1')).toBe('%PDF-');
		const stats = otherOrigin.stats();
		expect(stats.pdf.downloads).toBe(1);
		expect(stats.authHeadersSeenAtPdfHost).toEqual([]);
	});

	test('reports what each run cost', () => {
		// Not a check of the node: keeps the boot times visible in the test log.
		const lines = Object.values(batch.results).map(
			(r) =>
				`${r.id}: exit ${r.code}, ${r.ms} ms${r.crashSignal ? ` (n8n died by ${r.crashSignal} after the run)` : ''}`,
		);
		console.info(
			`n8n ${version}: import ${batch.importMs} ms, total ${batch.totalMs} ms\n${lines.join('\n')}`,
		);
		for (const r of Object.values(batch.results)) {
			if (r.run === undefined) throw new Error(`no run data for ${r.id}: ${describeRun(r)}`);
		}
	});
});
