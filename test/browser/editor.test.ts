// The node in n8n's editor, as a user meets it: a real n8n (the cached 2.x) with the packed package installed
// as a community node, driven through Debian's Chromium. Finds the node in the node panel, checks both
// operations' fields (labels, required marks, defaults, hints), adds line items, tests the credential in its
// dialog (right key and wrong key), runs a workflow that downloads the invoice PDF, and shows the output schema
// in the next node's input before any run. Each step saves a screenshot after checking that no error is on
// screen: into test-output/screenshots/ (ignored), or docs/screenshots/ (the README's) with `npm run screenshots`.
import type { Locator, Page } from 'playwright-core';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	DEFAULT_N8N_VERSION,
	NODE_TYPE,
	createN8nHome,
	ensureN8nInstalled,
	packPackage,
	removeHome,
	startN8nServer,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';
import {
	EDITOR_WAIT_MS,
	dragOnto,
	ensureChromium,
	expectNoVisibleError,
	labelOf,
	launchBrowser,
	openWorkflow,
	screenshot,
	signIn,
	type BrowserSession,
} from './browser';

const MINUTE = 60_000;
const VERSION = DEFAULT_N8N_VERSION;
const TRIGGER = 'When clicking ‘Execute workflow’';
const MSG_401 = 'The API key was rejected (HTTP 401): check the API key';

// Each test's own waits are bounded by EDITOR_WAIT_MS; this only catches a test that hangs outside them.
/** Console errors that are no fault of the node or the test, each with why. */
const HARMLESS_CONSOLE_ERRORS = [
	// The editor asks for the current session before anyone signs in; n8n answers 401 and shows the sign-in form.
	/status of 401 \(Unauthorized\) \(http:\/\/127\.0\.0\.1:\d+\/rest\/login\)$/,
	/^HTTP 401 GET http:\/\/127\.0\.0\.1:\d+\/rest\/login$/,
	// Requests that leave 127.0.0.1, aborted on purpose (the editor asks registry.npmjs.org about community nodes).
	/net::ERR_INTERNET_DISCONNECTED/,
];

jest.setTimeout(15 * MINUTE);

describe(`Invoice Service in n8n ${VERSION}'s editor (Chromium)`, () => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let server: N8nServer;
	let browser: BrowserSession;
	let page: Page;
	const started = Date.now();

	/** A saved workflow holding only a manual trigger (the editor autosaves, so each step starts from a new one). */
	async function newWorkflow(
		name: string,
		nodes: Array<Record<string, unknown>> = [],
		connections: Record<string, unknown> = {},
	): Promise<string> {
		const r = await server.rest('POST', '/workflows', {
			name,
			active: false,
			settings: {},
			nodes: [
				{
					id: 'trigger',
					name: TRIGGER,
					type: 'n8n-nodes-base.manualTrigger',
					typeVersion: 1,
					position: [0, 0],
					parameters: {},
				},
				...nodes,
			],
			connections,
		});
		const id = (r.body as { id?: string }).id;
		if (r.status !== 200 || !id)
			throw new Error(`creating workflow failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
		return id;
	}

	/** Opens the node panel from the trigger's "+" and searches. */
	async function searchNodePanel(query: string): Promise<Locator> {
		await page.locator('[data-test-id="canvas-handle-plus"]').first().click();
		const creator = page.locator('[data-test-id="node-creator"]');
		await creator.waitFor();
		await creator.locator('[data-test-id="node-creator-search-bar"]').fill(query);
		return creator;
	}

	/** Adds the Invoice Service node through the node panel with the given action; returns the open NDV. */
	async function addInvoiceServiceNode(
		action: 'Create a customer' | 'Create an invoice',
	): Promise<Locator> {
		const creator = await searchNodePanel('invoice');
		await creator
			.locator('[data-test-id="node-creator-item-name"]', { hasText: /^Invoice Service$/ })
			.click();
		await creator.getByText(action, { exact: true }).click();
		const ndv = page.locator('[data-test-id="ndv"]');
		await ndv.waitFor();
		return ndv.locator('[data-test-id="node-parameters"]');
	}

	/** The shown value of an options parameter (its select's input). */
	async function selectedOption(params: Locator, name: string): Promise<string> {
		return await params
			.locator(`[data-test-id="parameter-input-${name}"] input`)
			.first()
			.inputValue();
	}

	/** Opens an options parameter's dropdown, reads its choices, closes it. */
	async function optionsOf(params: Locator, name: string): Promise<string[]> {
		await params.locator(`[data-test-id="parameter-input-${name}"] input`).first().click();
		const items = page.locator('.el-select-dropdown__item:visible');
		await items.first().waitFor();
		const texts = (await items.allInnerTexts()).map((t) => t.split('\n')[0].trim());
		await page.keyboard.press('Escape');
		await items.first().waitFor({ state: 'hidden' });
		return texts;
	}

	/** Closes the NDV and reads the issue list n8n shows when hovering the node's warning sign on the canvas. */
	async function canvasIssues(nodeName: string): Promise<string[]> {
		await page.locator('[data-test-id="ndv-close-button"]').click();
		await page.locator('[data-test-id="ndv"]').waitFor({ state: 'hidden' });
		const node = page.locator('[data-test-id="canvas-node"]', { hasText: nodeName });
		await node.locator('[data-test-id="node-issues"]').hover();
		const items = page.locator('[data-test-id="tooltip-content"]:visible .titled-list-item');
		await items.first().waitFor();
		const texts = (await items.allInnerTexts()).map((t) => t.trim());
		await page.mouse.move(5, 450);
		return texts;
	}

	beforeAll(async () => {
		ensureChromium();
		await ensureN8nInstalled([VERSION]);
		const tarball = await packPackage();
		sandbox = await startSandbox();
		home = await createN8nHome(VERSION, tarball);
		server = await startN8nServer(home, { env: { N8N_DISABLE_UI: 'false' } });
		const health = await fetch(`${server.url}/healthz`);
		expect(health.status).toBe(200);
		await server.setupOwner();
		browser = await launchBrowser();
		page = browser.page;
		await signIn(page, server.url);
		console.log(
			`[browser] n8n ${VERSION} ready in ${server.bootMs} ms, signed in after ${Date.now() - started} ms`,
		);
	}, 15 * MINUTE);

	afterAll(async () => {
		if (browser) {
			if (browser.blocked.length)
				console.log(
					`[browser] aborted non-loopback requests: ${[...new Set(browser.blocked)].join(', ')}`,
				);
			await browser.close();
		}
		await server?.stop();
		await sandbox?.close();
		if (home) removeHome(home);
		console.log(`[browser] total ${Date.now() - started} ms`);
	});

	afterEach(() => {
		// An error in the browser's console fails the test it happened in, unless it is known to be harmless.
		const unexpected = (browser?.consoleErrors.splice(0) ?? []).filter(
			(error) => !HARMLESS_CONSOLE_ERRORS.some((harmless) => harmless.test(error)),
		);
		if (unexpected.length)
			throw new Error(`unexpected errors in the browser's console:\n${unexpected.join('\n')}`);
	});

	test('the node panel finds the Invoice Service node when searching "invoice"', async () => {
		await openWorkflow(page, server.url, await newWorkflow('Node panel'));
		const creator = await searchNodePanel('invoice');
		const item = creator.locator('[data-test-id="node-creator-item-name"]', {
			hasText: /^Invoice Service$/,
		});
		await item.waitFor();
		expect(
			await creator.locator('[data-test-id="node-creator-item-description"]').allInnerTexts(),
		).toContain(
			'Create customers and PDF invoices (optionally e-mailed) in the Customer and Invoice Service',
		);
		await screenshot(page, 'node-panel.jpg');

		await item.click();
		const actions = creator.getByText(/^Create (a customer|an invoice)$/);
		await actions.first().waitFor();
		expect((await actions.allInnerTexts()).map((t) => t.trim()).sort()).toEqual([
			'Create a customer',
			'Create an invoice',
		]);
	});

	test('Customer → Create shows its fields with labels, placeholders and required marks', async () => {
		await openWorkflow(page, server.url, await newWorkflow('Customer create'));
		const params = await addInvoiceServiceNode('Create a customer');
		expect(await selectedOption(params, 'resource')).toBe('Customer');
		expect(await selectedOption(params, 'operation')).toBe('Create');
		const expected: Array<[string, string]> = [
			['resource', 'Resource'],
			['operation', 'Operation'],
			['firstName', 'First Name'],
			['lastName', 'Last Name'],
			['email', 'Email'],
		];
		for (const [name, label] of expected) expect(await labelOf(params, name)).toBe(label);
		expect(
			await params
				.locator('[data-test-id="parameter-input-firstName"] input')
				.getAttribute('placeholder'),
		).toBe('e.g. Ada');
		expect(
			await params
				.locator('[data-test-id="parameter-input-lastName"] input')
				.getAttribute('placeholder'),
		).toBe('e.g. Lovelace');
		expect(
			await params
				.locator('[data-test-id="parameter-input-email"] input')
				.getAttribute('placeholder'),
		).toBe('e.g. ada@example.com');
		for (const name of ['firstName', 'lastName', 'email']) {
			expect(
				await params.locator(`[data-test-id="parameter-input-${name}"] input`).inputValue(),
			).toBe('');
		}
		// Collections: "Additional Fields" → Company Name, "Options".
		await params.getByRole('button', { name: 'Add Field' }).click();
		expect(await labelOf(params, 'companyName')).toBe('Company Name');
		expect(
			await params
				.locator('[data-test-id="parameter-input-companyName"] input')
				.getAttribute('placeholder'),
		).toBe('e.g. Analytical Engines Ltd');
		const sections = await params
			.locator('[data-test-id="parameter-item"] label:visible')
			.allInnerTexts();
		const titles = sections.map((t) => t.split('\n')[0].trim());
		expect(titles).toEqual(expect.arrayContaining(['Additional Fields', 'Options']));
		expect(titles.indexOf('First Name')).toBeLessThan(titles.indexOf('Last Name'));
		expect(titles.indexOf('Last Name')).toBeLessThan(titles.indexOf('Email'));
		await screenshot(page, 'customer-create.jpg');

		// n8n marks required node parameters through the node's issues (the editor draws no asterisk there).
		const issues = await canvasIssues('Create a customer');
		expect(issues).toEqual(
			expect.arrayContaining([
				'Parameter "First Name" is required.',
				'Parameter "Last Name" is required.',
				'Parameter "Email" is required.',
			]),
		);
		expect(issues.filter((i) => i.startsWith('Parameter'))).toHaveLength(3);
	});

	test('Invoice → Create shows its fields, defaults and hints; "Add Line Item" adds rows', async () => {
		await openWorkflow(page, server.url, await newWorkflow('Invoice create'));
		const params = await addInvoiceServiceNode('Create an invoice');
		expect(await selectedOption(params, 'resource')).toBe('Invoice');
		expect(await selectedOption(params, 'operation')).toBe('Create');
		const expected: Array<[string, string]> = [
			['customerId', 'Customer ID'],
			['currency', 'Currency'],
			['lineItemsMode', 'Specify Line Items'],
			['amountMode', 'Amount'],
		];
		for (const [name, label] of expected) expect(await labelOf(params, name)).toBe(label);
		expect(
			await params
				.locator('[data-test-id="parameter-input-customerId"] input')
				.getAttribute('placeholder'),
		).toBe('e.g. cust_123');
		// The hint under the field (always shown, unlike the description's tooltip).
		const customerIdItem = params.locator('[data-test-id="parameter-item"]', {
			has: page.locator('label[for="customerId"]'),
		});
		await expect(customerIdItem.innerText()).resolves.toContain(
			'Usually an expression such as {{ $json.id }} after a Customer → Create node',
		);
		// Defaults.
		expect(await selectedOption(params, 'currency')).toBe('EUR');
		expect(await selectedOption(params, 'lineItemsMode')).toBe('Using Fields Below');
		expect(await selectedOption(params, 'amountMode')).toBe('Sum of Line Prices');
		expect(await optionsOf(params, 'currency')).toEqual(['EUR', 'USD', 'GBP']);
		expect(await optionsOf(params, 'amountMode')).toEqual(['Sum of Line Prices', 'Custom Amount']);
		// The custom amount only appears when chosen.
		await expect(params.locator('[data-test-id="parameter-input-amount"]').count()).resolves.toBe(
			0,
		);

		// Line items: none at first, one row per click.
		const lines = params.locator('[data-test-id="fixed-collection-lineItems"]');
		await expect(lines.getByText('Currently no items exist').isVisible()).resolves.toBe(true);
		const add = lines.getByRole('button', { name: 'Add Line Item' });
		await add.click();
		await lines.locator('[data-test-id="parameter-input-description"]').first().waitFor();
		await add.click();
		await waitForCount(lines.locator('[data-test-id="parameter-input-description"]'), 2);
		expect(await lines.locator('[data-test-id="parameter-input-price"]').count()).toBe(2);
		expect(await lines.locator('[data-test-id="fixed-collection-delete"]').count()).toBe(2);
		expect(await labelOf(lines, 'description')).toBe('Description');
		expect(await labelOf(lines, 'price')).toBe('Price');
		expect(
			await lines
				.locator('[data-test-id="parameter-input-description"] input')
				.first()
				.getAttribute('placeholder'),
		).toBe('e.g. Consulting, March');
		expect(
			await lines.locator('[data-test-id="parameter-input-price"] input').first().inputValue(),
		).toMatch(/^0(\.00)?$/);
		await lines
			.locator('[data-test-id="parameter-input-description"] input')
			.first()
			.scrollIntoViewIfNeeded();
		await screenshot(page, 'invoice-create.jpg');

		const issues = await canvasIssues('Create an invoice');
		expect(issues).toContain('Parameter "Customer ID" is required.');
		expect(issues.filter((i) => i.startsWith('Parameter'))).toEqual([
			'Parameter "Customer ID" is required.',
		]);
	});

	test('the credential dialog: Test succeeds with the right key and shows the 401 message with a wrong one', async () => {
		await openWorkflow(page, server.url, await newWorkflow('Credential'));
		await addInvoiceServiceNode('Create a customer');
		await page.locator('[data-test-id="node-credentials-empty-state"] button').click();
		const dialog = page.locator('[data-test-id="credential-edit-dialog"]');
		await dialog.waitFor();
		// Credential fields: labels with n8n's required asterisk.
		expect(await labelOf(dialog, 'baseUrl')).toBe('Base URL *');
		expect(await labelOf(dialog, 'apiKey')).toBe('API Key *');
		expect(await labelOf(dialog, 'allowHttp')).toBe('Allow Plain HTTP');
		expect(
			await dialog
				.locator('[data-test-id="parameter-input-baseUrl"] input')
				.getAttribute('placeholder'),
		).toBe('https://your-app.bubbleapps.io/api/1.1/wf');
		expect(
			await dialog.locator('[data-test-id="parameter-input-apiKey"] input').getAttribute('type'),
		).toBe('password');

		// Right key: n8n tests on save; from the node panel a passing credential closes its dialog.
		const before = sandbox.stats().requests.byStatus;
		await dialog.locator('[data-test-id="parameter-input-baseUrl"] input').fill(sandbox.rootUrl);
		await dialog.locator('[data-test-id="parameter-input-apiKey"] input').fill(sandbox.apiKey);
		await page.locator('[data-test-id="credential-save-button"]').click();
		await dialog.waitFor({ state: 'hidden' });
		// Reopening runs the test again and shows its verdict.
		await page.locator('[data-test-id="credential-edit-button"]').first().click();
		await dialog.waitFor();
		await page.locator('[data-test-id="credentials-config-container-test-success"]').waitFor();
		await expect(
			page.locator('[data-test-id="credentials-config-container-test-success"]').innerText(),
		).resolves.toMatch(/Connection tested successfully/);
		await screenshot(page, 'credential-ok.jpg');
		const after = sandbox.stats().requests.byStatus;
		// The test request reached the service with the key and got "invalid input" (nothing is created).
		expect((after['400'] ?? 0) - (before['400'] ?? 0)).toBeGreaterThanOrEqual(1);
		expect(sandbox.stats().customers).toBe(0);

		// Wrong key: the dialog stays open with the credential's own 401 message.
		await dialog.locator('[data-test-id="parameter-input-apiKey"] input').fill('not-the-right-key');
		await page.locator('[data-test-id="credential-save-button"]').click();
		const failed = dialog.getByText('Couldn’t connect with these settings');
		await failed.waitFor().catch(async () => {
			const stillOpen = await dialog.isVisible();
			throw new Error(
				`the credential test did not fail with a wrong API key (the service answered ${JSON.stringify(
					sandbox.stats().requests.byStatus,
				)}; dialog ${stillOpen ? `still open: ${(await dialog.innerText()).replace(/\s+/g, ' ').slice(0, 400)}` : 'closed, i.e. n8n reported success'})`,
			);
		});
		const details = dialog.getByText('More details');
		if (await details.isVisible()) await details.click();
		await dialog.getByText(MSG_401, { exact: true }).waitFor();
		await screenshot(page, 'credential-401.jpg', { allowCredentialError: true });
		expect(sandbox.stats().requests.byStatus['401'] ?? 0).toBeGreaterThanOrEqual(1);
		await page.keyboard.press('Escape');
	});

	test('a workflow run shows the created invoice with its PDF as binary output', async () => {
		await page.goto(`${server.url}/home/workflows`);
		const cred = await server.rest('POST', '/credentials', {
			name: 'Invoice Service (sandbox)',
			type: CREDENTIAL_TYPE,
			data: { baseUrl: sandbox.rootUrl, apiKey: sandbox.apiKey, allowHttp: false },
		});
		const credId = (cred.body as { id?: string }).id;
		expect(credId).toBeTruthy();
		const credentials = { [CREDENTIAL_TYPE]: { id: credId, name: 'Invoice Service (sandbox)' } };
		const id = await newWorkflow(
			'Invoice with PDF',
			[
				{
					id: 'customer',
					name: 'Create customer',
					type: NODE_TYPE,
					typeVersion: 1,
					position: [240, 0],
					credentials,
					parameters: {
						resource: 'customer',
						operation: 'create',
						firstName: 'Ada',
						lastName: 'Lovelace',
						email: 'ada@example.com',
						additionalFields: { companyName: 'Analytical Engines Ltd' },
					},
				},
				{
					id: 'invoice',
					name: 'Create invoice',
					type: NODE_TYPE,
					typeVersion: 1,
					position: [480, 0],
					credentials,
					parameters: {
						resource: 'invoice',
						operation: 'create',
						customerId: '={{ $json.id }}',
						currency: 'EUR',
						lineItemsMode: 'fields',
						lineItems: {
							item: [
								{ description: 'Consulting, March', price: 1200 },
								{ description: 'Travel', price: 89.9 },
							],
						},
						amountMode: 'sum',
						options: { downloadPdf: true },
					},
				},
			],
			{
				[TRIGGER]: { main: [[{ node: 'Create customer', type: 'main', index: 0 }]] },
				'Create customer': { main: [[{ node: 'Create invoice', type: 'main', index: 0 }]] },
			},
		);
		await openWorkflow(page, server.url, id);
		await page.locator('[data-test-id="execute-workflow-button"]').first().click();
		await waitForCount(page.locator('[data-test-id="canvas-node-status-success"]'), 3);
		await expectNoVisibleError(page);
		const stats = sandbox.stats();
		expect(stats.customers).toBe(1);
		expect(stats.invoices).toBe(1);
		expect(stats.pdf.downloads).toBe(1);

		await page.locator('[data-test-id="canvas-node"]', { hasText: 'Create invoice' }).dblclick();
		const output = page.locator('[data-test-id="output-panel"]');
		await output.waitFor();
		const binary = output.getByText(/^inv_\d+\.pdf$/);
		if (!(await binary.isVisible())) await output.getByText('Binary', { exact: true }).click();
		await binary.waitFor();
		const text = await output.innerText();
		expect(text).toMatch(/1 item/);
		expect(text).toContain('application/pdf');
		expect(text).toMatch(/File Name:\s*inv_\d+\.pdf/);
		await screenshot(page, 'run-output-pdf.jpg');
		console.log(`[browser] all steps done after ${Date.now() - started} ms`);
	});

	test("before any run, the next node's input shows the invoice's fields (the output schema), and one maps by drag and drop", async () => {
		const schemaAnswers: number[] = [];
		const watch = (response: { url(): string; status(): number }) => {
			if (response.url().includes('/schemas/')) schemaAnswers.push(response.status());
		};
		page.on('response', watch);
		const id = await newWorkflow(
			'Schema preview',
			[
				{
					id: 'invoice',
					name: 'Create invoice',
					type: NODE_TYPE,
					typeVersion: 1,
					position: [240, 0],
					parameters: { resource: 'invoice', operation: 'create', currency: 'EUR' },
				},
				{
					id: 'set',
					name: 'Next step',
					type: 'n8n-nodes-base.set',
					typeVersion: 3.4,
					position: [480, 0],
					parameters: { mode: 'manual', assignments: { assignments: [] }, options: {} },
				},
			],
			{
				[TRIGGER]: { main: [[{ node: 'Create invoice', type: 'main', index: 0 }]] },
				'Create invoice': { main: [[{ node: 'Next step', type: 'main', index: 0 }]] },
			},
		);
		await openWorkflow(page, server.url, id);
		await page.locator('[data-test-id="canvas-node"]', { hasText: 'Next step' }).dblclick();
		const input = page.locator('[data-test-id="ndv-input-panel"]');
		await input.waitFor();
		const field = (name: string) =>
			input.locator('[data-test-id="run-data-schema-item"]', { hasText: new RegExp(`^${name}`) });
		await field('invoice_id').first().waitFor();
		await field('download_url').first().waitFor();
		await expect(field('status').first().isVisible()).resolves.toBe(true);
		// The editor asked for the schema and got it (no 404 in the console).
		expect(schemaAnswers).toContain(200);
		expect(schemaAnswers).not.toContain(404);
		page.off('response', watch);

		// Drag download_url onto the Set node's fields: the editor writes the expression that maps it.
		const drop = page
			.locator('[data-test-id="assignment-collection-drop-area"], [data-test-id="drop-area"]')
			.first();
		// The pill is what the editor drags (data-target "mappable"), not the whole row.
		const pill = field('download_url').first().locator('[data-target="mappable"]');
		await dragOnto(page, pill, drop);
		// The editor names the new field after the one dropped and writes the expression that maps it.
		const assignment = page.locator('[data-test-id="assignment"]').first();
		await assignment.waitFor();
		const names = await assignment
			.locator('input, textarea')
			.evaluateAll((inputs) =>
				inputs.map((input) => (input as unknown as { value: string }).value),
			);
		expect(names).toContain('download_url');
		expect(await assignment.innerText()).toMatch(/\{\{\s*\$json\.download_url\s*\}\}/);
		await screenshot(page, 'schema-preview.jpg');
	});

	test('as an AI tool: every field starts as "defined automatically by the model", with its format', async () => {
		const cred = await server.rest('POST', '/credentials', {
			name: 'Invoice Service (agent)',
			type: CREDENTIAL_TYPE,
			data: { baseUrl: sandbox.rootUrl, apiKey: sandbox.apiKey, allowHttp: false },
		});
		const credId = (cred.body as { id?: string }).id;
		const tool = 'Create an invoice in Invoice Service';
		// What a user has after adding "Invoice Service Tool" to an MCP Server Trigger and picking the action and
		// the credential: no field typed.
		const id = await newWorkflow(
			'Invoice tools for agents',
			[
				{
					id: 'mcp',
					name: 'MCP Server Trigger',
					type: '@n8n/n8n-nodes-langchain.mcpTrigger',
					typeVersion: 2,
					position: [240, 0],
					parameters: { path: 'invoice-tools' },
					webhookId: '0b0c0d0e-0000-4000-8000-0000000000bb',
				},
				{
					id: 'tool',
					name: tool,
					type: `${NODE_TYPE}Tool`,
					typeVersion: 1,
					position: [240, 240],
					credentials: {
						[CREDENTIAL_TYPE]: { id: credId, name: 'Invoice Service (agent)' },
					},
					parameters: { resource: 'invoice', operation: 'create' },
				},
			],
			{ [tool]: { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] } },
		);
		await openWorkflow(page, server.url, id);
		await page
			.locator('[data-test-id="canvas-node"]', { hasText: 'Invoice Service' })
			.first()
			.dblclick();
		const params = page.locator('[data-test-id="ndv"] [data-test-id="node-parameters"]');
		await params.waitFor();
		const overrides = params.locator('[data-test-id="fromAI-override-field"]');
		await waitForCount(overrides, 3);
		for (const text of await overrides.allInnerTexts()) {
			expect(text).toMatch(/Defined automatically by the\s+model/);
		}
		expect(await labelOf(params, 'customerId')).toBe('Customer ID');
		expect(await labelOf(params, 'currency')).toBe('Currency');
		expect(await labelOf(params, 'lineItemsJson')).toBe('Line Items (JSON)');
		await screenshot(page, 'agent-tool.jpg');
		await page.locator('[data-test-id="ndv-close-button"]').click();
	});
});

async function waitForCount(
	locator: Locator,
	count: number,
	timeoutMs = EDITOR_WAIT_MS,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	let last = -1;
	while (Date.now() < deadline) {
		last = await locator.count();
		if (last === count) return;
		await new Promise((r) => setTimeout(r, 200));
	}
	throw new Error(`expected ${count} of ${locator.toString()}, found ${last}`);
}
