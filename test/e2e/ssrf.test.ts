// n8n's SSRF protection switched on (N8N_SSRF_PROTECTION_ENABLED=true) in a real n8n: the service reached by
// a host name the administrator allowed (N8N_SSRF_ALLOWED_HOSTNAMES=localhost), its PDFs served from
// 127.0.0.1, which n8n blocks by default; and the service itself reached at 127.0.0.1, blocked. n8n's refusal
// is an item error that names the address and the settings, at once (no retry), and the credential's Test
// button says what n8n says. Only n8n 2.x has the protection (@n8n/backend-network); 1.x has no such setting.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	loadExample,
	nodeError,
	nodeOutput,
	outputJson,
	packPackage,
	prepareWorkflow,
	removeHome,
	runWorkflows,
	startN8nServer,
	testCredential,
	type CredentialImport,
	type N8nHome,
	type RunWorkflowsResult,
} from '../../tools/n8n';

const MINUTE = 60_000;
const SSRF_ON = { N8N_SSRF_PROTECTION_ENABLED: 'true', N8N_SSRF_ALLOWED_HOSTNAMES: 'localhost' };
const WITH_SSRF_PROTECTION = N8N_VERSIONS.filter((version) => !version.startsWith('1.'));

describe.each(WITH_SSRF_PROTECTION)('n8n %s with SSRF protection on', (version) => {
	let home: N8nHome;
	let service: Sandbox; // PDFs from a second origin: http://127.0.0.1:<another port>
	let batch: RunWorkflowsResult;
	/** The service by the allowed host name; its PDF links still say 127.0.0.1. */
	let allowedBaseUrl: string;

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		service = await startSandbox({ pdfOrigin: 'other' });
		allowedBaseUrl = service.baseUrl.replace('//127.0.0.1:', '//localhost:');
		home = await createN8nHome(version, tarball);
		const credentials: CredentialImport[] = [
			{
				id: 'credSsrfAllowed1',
				name: 'Sandbox by its allowed host name',
				type: CREDENTIAL_TYPE,
				data: { baseUrl: allowedBaseUrl, apiKey: service.apiKey },
			},
			{
				id: 'credSsrfBlocked1',
				name: 'Sandbox at a blocked address',
				type: CREDENTIAL_TYPE,
				data: { baseUrl: service.baseUrl, apiKey: service.apiKey },
			},
		];
		const use = ({ id, name }: CredentialImport) => ({ id, name });
		batch = await runWorkflows(home, {
			credentials,
			workflows: [
				prepareWorkflow(loadExample('new-customer-invoice-pdf.json'), {
					id: 'ssrfPdf',
					credential: use(credentials[0]),
				}),
				prepareWorkflow(loadExample('customer-error-output.json'), {
					id: 'ssrfService',
					credential: use(credentials[1]),
				}),
			],
			env: SSRF_ON,
		});
	}, 25 * MINUTE);

	afterAll(async () => {
		await service?.close();
		if (home) removeHome(home);
	});

	test('the service allowed, its PDF host blocked: the invoice is created, the PDF error names it, 127.0.0.1 and the settings, no retry', () => {
		const r = batch.results.ssrfPdf;
		const [customer] = outputJson(r.run, 'Create customer');
		expect(customer).toMatchObject({
			email: expect.stringMatching(/^ada\.lovelace\+\d+@example\.com$/),
		});
		const [invoice] = service.records().invoices;
		expect(invoice).toMatchObject({ customerId: customer.id });
		const error = nodeError(r.run, 'Create invoice');
		expect(error?.message).toBe(
			`Invoice ${invoice.id} was created, but its PDF could not be downloaded: n8n's SSRF protection refused the address 127.0.0.1`,
		);
		expect(error?.description).toContain(
			'N8N_SSRF_ALLOWED_HOSTNAMES=127.0.0.1 or N8N_SSRF_ALLOWED_IP_RANGES=127.0.0.1/32',
		);
		expect(error?.description).toContain('it only downloads the PDF');
		expect(service.stats().pdf.downloads).toBe(0);
		// The node logs every retry ("...; retrying for 1 s"): none here.
		expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/retrying for|gave up after waiting/);
	});

	test('the service itself blocked: every item is an ordinary error on the error output, nothing reached it', () => {
		const r = batch.results.ssrfService;
		expect(r.code).toBe(0);
		expect(nodeOutput(r.run, 'Create customer', 0)).toEqual([]);
		const failed = nodeOutput(r.run, 'Create customer', 1);
		expect(failed.length).toBeGreaterThan(1);
		expect(failed.map((item) => item.pairedItem)).toEqual(
			failed.map((_, index) => ({ item: index })),
		);
		for (const item of failed) {
			expect((item.json.error as { message: string }).message).toBe(
				"n8n's SSRF protection refused the address 127.0.0.1",
			);
		}
		// Only the customer of the other workflow (through the allowed host name) reached the service.
		expect(service.records().customers.map((customer) => customer.email)).toEqual([
			expect.stringMatching(/^ada\.lovelace\+\d+@example\.com$/),
		]);
	});

	test(
		"the credential's Test button: passes by the allowed host name; at the blocked address it fails with n8n's SSRF words",
		async () => {
			const server = await startN8nServer(home, { env: SSRF_ON });
			try {
				await server.setupOwner();
				const check = (name: string, baseUrl: string) =>
					testCredential(server, {
						name,
						type: CREDENTIAL_TYPE,
						data: { baseUrl, apiKey: service.apiKey, allowHttp: false },
					});
				await expect(check('allowed', allowedBaseUrl)).resolves.toEqual({
					status: 'OK',
					message: 'Connection successful!',
				});
				// n8n makes the declared test request itself and shows its own error's message.
				await expect(check('blocked', service.baseUrl)).resolves.toMatchObject({
					status: 'Error',
					message: 'The request was blocked because it resolves to a restricted IP address',
				});
			} finally {
				await server.stop();
			}
		},
		5 * MINUTE,
	);
});
