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
	let outbox: string;
	let batch: RunWorkflowsResult;
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
		];
		const use = (id: string) => {
			const c = credentials.find((x) => x.id === id)!;
			return { id: c.id, name: c.name };
		};
		const invoicePdf = loadExample('new-customer-invoice-pdf.json');
		const workflows = [
			prepareWorkflow(invoicePdf, { id: 'e2eInvoicePdf', credential: use('credPlain0000001') }),
			prepareWorkflow(loadExample('customer-error-output.json'), {
				id: 'e2eErrorOutput',
				credential: use('credPlain0000001'),
			}),
			// The same workflow again: now every e-mail exists, so every item goes to the error output.
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
		];
		batch = await runWorkflows(home, { credentials, workflows });
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all([plain?.close(), bubble?.close(), otherOrigin?.close()]);
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
			email: 'ada.lovelace@example.com',
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
			sendEmail: true,
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
	test('the PDF arrives as binary "data" (application/pdf, inv_<n>.pdf), stored byte for byte as the service serves it, and the e-mail is sent', async () => {
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
		const eml = path.join(outbox, `${invoiceId}.eml`);
		expect(fs.existsSync(eml)).toBe(true);
		expect(fs.readFileSync(eml, 'utf8')).toContain('ada.lovelace@example.com');
	});

	test('a duplicate e-mail goes to the error output with the 409 message; the others are created', () => {
		const r = batch.results.e2eErrorOutput;
		expect(r.code).toBe(0);
		const created = outputJson(r.run, 'Create customer', 0);
		const failed = nodeOutput(r.run, 'Create customer', 1);
		expect(created.map((c) => c.email).sort()).toEqual([
			'alan.turing@example.com',
			'grace.hopper@example.com',
		]);
		expect(failed).toHaveLength(1);
		expect(errorMessage(failed[0])).toBe(
			'A customer with the e-mail grace.hopper@example.com already exists',
		);
		// Items 0 and 2 carry the same e-mail; whichever reached the service second is the one that failed.
		const failedIndex = (failed[0].pairedItem as { item: number }).item;
		expect([0, 2]).toContain(failedIndex);
		const pairedCreated = nodeOutput(r.run, 'Create customer', 0).map(
			(i) => (i.pairedItem as { item: number }).item,
		);
		expect(pairedCreated.sort()).toEqual([0, 1, 2].filter((i) => i !== failedIndex));
		expect(outputJson(r.run, 'Not created (already exists)')).toHaveLength(1);
		expect(outputJson(r.run, 'Created')).toHaveLength(2);
		expect(plain.stats().customersByEmail['grace.hopper@example.com']).toBe(1);
	});

	test('a second run of the same customers sends every item to the error output', () => {
		const r = batch.results.e2eErrorOutput2;
		expect(r.code).toBe(0);
		expect(nodeOutput(r.run, 'Create customer', 0)).toEqual([]);
		const failed = nodeOutput(r.run, 'Create customer', 1);
		expect(failed.map(errorMessage)).toEqual([
			'A customer with the e-mail grace.hopper@example.com already exists',
			'A customer with the e-mail alan.turing@example.com already exists',
			'A customer with the e-mail grace.hopper@example.com already exists',
		]);
		expect(failed.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(nodesThatRan(r.run)).not.toContain('Created');
		expect(plain.stats().customersByEmail).toMatchObject({
			'grace.hopper@example.com': 1,
			'alan.turing@example.com': 1,
		});
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
