// The tool form of the node (usableAsTool) in a real n8n 2.x, driven without any language model: n8n's MCP
// Server Trigger exposes the Invoice Service tool nodes attached to it, and the official MCP client SDK lists
// them, reads their input schemas and calls them over Streamable HTTP on the production URL /mcp/<path>.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { TOOL_DESCRIPTIONS } from '../../nodes/InvoiceService/actions/tool';
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	PACKAGE_NAME,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	importAndPublish,
	invoiceServiceCredential,
	packPackage,
	removeHome,
	startN8nServer,
	waitForWebhook,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';

const MINUTE = 60_000;
/**
 * The supported n8n versions (INVOICE_SERVICE_E2E_N8N_VERSIONS picks some). Both generate the tool variant of
 * a usableAsTool community node themselves and have MCP Server Trigger v2 (Streamable HTTP on /mcp/<path>).
 */
const VERSIONS = N8N_VERSIONS;
/** The tool variant n8n generates for a node with usableAsTool: `<package>.<node name>Tool`. */
const TOOL_TYPE = `${PACKAGE_NAME}.invoiceServiceTool`;
const MCP_PATH = 'invoice-tools';
const CREDENTIAL = { id: 'credMcpSandbox01', name: 'Invoice Service (sandbox)' };

/**
 * The tool nodes as a user sets them up: add "Invoice Service Tool" to the trigger, pick the operation and the
 * credential. Nothing typed: the names and the tool descriptions are n8n's defaults, and no `$fromAI()` is
 * written by hand; the tool variant's own defaults make every field an argument the model fills.
 */
const CUSTOMER_TOOL = 'Create a customer in Invoice Service';
const INVOICE_TOOL = 'Create an invoice in Invoice Service';
/** n8n's tool names: the node name with every character outside [A-Za-z0-9_-] replaced by "_". */
const toolName = (nodeName: string) => nodeName.replace(/[^a-zA-Z0-9_-]/g, '_');
const CUSTOMER = toolName(CUSTOMER_TOOL);
const INVOICE = toolName(INVOICE_TOOL);

export function mcpWorkflow(): Record<string, unknown> {
	const cred = { [CREDENTIAL_TYPE]: CREDENTIAL };
	const toolNode = (id: string, name: string, resource: string, x: number) => ({
		parameters: { resource, operation: 'create' },
		id,
		name,
		type: TOOL_TYPE,
		typeVersion: 1,
		position: [x, 200],
		credentials: cred,
	});
	return {
		id: 'mcpInvoiceTools',
		name: 'Invoice Service tools over MCP',
		nodes: [
			{
				parameters: { path: MCP_PATH },
				id: '0b0c0d0e-0000-4000-8000-000000000001',
				name: 'MCP Server Trigger',
				type: '@n8n/n8n-nodes-langchain.mcpTrigger',
				typeVersion: 2,
				position: [0, 0],
				webhookId: '0b0c0d0e-0000-4000-8000-0000000000aa',
			},
			toolNode('0b0c0d0e-0000-4000-8000-000000000002', CUSTOMER_TOOL, 'customer', -100),
			toolNode('0b0c0d0e-0000-4000-8000-000000000003', INVOICE_TOOL, 'invoice', 100),
		],
		connections: {
			[CUSTOMER_TOOL]: { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] },
			[INVOICE_TOOL]: { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

interface ToolResult {
	isError?: boolean;
	content?: Array<{ type: string; text?: string }>;
}
const text = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

describe.each(VERSIONS)('Invoice Service as MCP tools in a real n8n %s', (VERSION) => {
	let home: N8nHome | undefined;
	let server: N8nServer | undefined;
	let sandbox: Sandbox | undefined;
	let client: Client | undefined;
	const timings: Record<string, number> = {};

	beforeAll(async () => {
		const t0 = Date.now();
		await ensureN8nInstalled([VERSION]);
		const tarball = await packPackage();
		sandbox = await startSandbox();
		home = await createN8nHome(VERSION, tarball);
		Object.assign(
			timings,
			await importAndPublish(home, {
				credentials: [invoiceServiceCredential(CREDENTIAL, sandbox)],
				workflows: [mcpWorkflow()],
			}),
		);
		server = await startN8nServer(home);
		timings.boot = server.bootMs;
		timings.webhookRegistered = await waitForWebhook(`${server.url}/mcp/${MCP_PATH}`, 'POST');
		client = new Client({ name: 'invoice-service-e2e', version: '1.0.0' });
		await client.connect(
			new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/${MCP_PATH}`)),
		);
		timings.setup = Date.now() - t0;
	}, 20 * MINUTE);

	afterAll(async () => {
		console.log(`[mcp e2e ${VERSION}] timings (ms): ${JSON.stringify(timings)}`);
		await client?.close().catch(() => undefined);
		await server?.stop();
		if (server) {
			// The server's log of the last run, for a look after a failure (test-output/ is git-ignored).
			const logDir = path.join(REPO_ROOT, 'test-output', 'e2e-mcp');
			fs.mkdirSync(logDir, { recursive: true });
			fs.writeFileSync(path.join(logDir, `n8n-${VERSION}.log`), server.output());
		}
		await sandbox?.close();
		if (home) removeHome(home);
	});

	const call = async (name: string, args: Record<string, unknown>) =>
		(await client!.callTool({ name, arguments: args })) as ToolResult;

	test('lists both tools; every argument says its format, with nothing typed by the user', async () => {
		const { tools } = await client!.listTools();
		const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
		expect(Object.keys(byName).sort()).toEqual([CUSTOMER, INVOICE]);

		const customer = byName[CUSTOMER];
		// The tool variant's own Description parameter (n8n's automatic action sentence would carry no format).
		expect(customer.description).toBe(TOOL_DESCRIPTIONS.customer.create);
		expect(customer.inputSchema).toMatchObject({
			type: 'object',
			properties: {
				firstName: { type: 'string', description: "The customer's first name" },
				lastName: { type: 'string', description: "The customer's last name" },
				email: { type: 'string', description: expect.stringContaining('like name@example.com') },
			},
		});
		expect(Object.keys(customer.inputSchema.properties ?? {}).sort()).toEqual([
			'email',
			'firstName',
			'lastName',
		]);
		expect([...(customer.inputSchema.required ?? [])].sort()).toEqual([
			'email',
			'firstName',
			'lastName',
		]);

		const invoice = byName[INVOICE];
		expect(invoice.description).toBe(TOOL_DESCRIPTIONS.invoice.create);
		const props = invoice.inputSchema.properties as Record<
			string,
			{ type?: string; description?: string }
		>;
		expect(Object.keys(props).sort()).toEqual(['currency', 'customerId', 'lineItems']);
		expect([...(invoice.inputSchema.required ?? [])].sort()).toEqual([
			'currency',
			'customerId',
			'lineItems',
		]);
		expect(props.customerId).toMatchObject({
			type: 'string',
			description: expect.stringContaining('like cust_123'),
		});
		expect(props.currency).toMatchObject({
			type: 'string',
			description: expect.stringContaining('one of EUR, USD, GBP'),
		});
		expect(props.lineItems.description).toEqual(
			expect.stringMatching(
				/JSON array like \[\{"description": "Consulting", "price": 100\.5\}\].*excluding VAT with at most 2 decimals.*amount, excluding VAT, is the sum/,
			),
		);
	});

	test('create customer, then an invoice in the currency the model chose: short answers, right records', async () => {
		const created = await call(CUSTOMER, {
			firstName: 'Grace',
			lastName: 'Hopper',
			email: 'grace.hopper@example.com',
		});
		expect(created.isError).toBeFalsy();
		const [customerAnswer] = JSON.parse(text(created)) as Array<Record<string, unknown>>;
		// The model gets the customer's id, name and e-mail: nothing else.
		expect(customerAnswer).toEqual({
			id: expect.stringMatching(/^cust_\d+$/),
			name: 'Grace Hopper',
			email: 'grace.hopper@example.com',
		});
		const customerId = customerAnswer.id as string;
		expect(sandbox!.records().customers).toEqual([
			expect.objectContaining({ id: customerId, email: 'grace.hopper@example.com' }),
		]);

		const invoiced = await call(INVOICE, {
			customerId,
			currency: 'GBP',
			lineItems: [
				{ description: 'Compiler consulting', price: 1200.5 },
				{ description: 'Travel', price: 99.25 },
			],
		});
		expect({ isError: invoiced.isError, text: text(invoiced) }).toMatchObject({
			text: expect.stringContaining('"invoice_id":"inv_'),
		});
		expect(invoiced.isError).toBeFalsy();
		const [invoiceAnswer] = JSON.parse(text(invoiced)) as Array<Record<string, unknown>>;
		expect(invoiceAnswer).toEqual({
			invoice_id: expect.stringMatching(/^inv_\d+$/),
			status: 'sent',
			download_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/.*inv_\d+/),
		});
		const stored = sandbox!.records().invoices;
		expect(stored).toHaveLength(1);
		expect(stored[0]).toMatchObject({
			id: invoiceAnswer.invoice_id,
			customerId,
			currency: 'GBP',
			amount: 1299.75,
			items: [
				expect.objectContaining({ description: 'Compiler consulting', price: 1200.5 }),
				expect.objectContaining({ description: 'Travel', price: 99.25 }),
			],
		});
	});

	test('a bad e-mail comes back as a readable tool error naming the field; nothing is created', async () => {
		const before = sandbox!.records().customers.length;
		const bad = await call(CUSTOMER, {
			firstName: 'No',
			lastName: 'Mail',
			email: 'not-an-email',
		});
		expect({ isError: bad.isError, text: text(bad) }).toEqual({
			isError: true,
			text: expect.stringMatching(/Email.*e-mail address.*not-an-email/s),
		});
		expect(sandbox!.records().customers).toHaveLength(before);
	});

	test('invoice arguments the node rejects (currency, customer id, price) name the field; nothing is sent', async () => {
		const before = sandbox!.stats().requests.total;
		const cases: Array<[Record<string, unknown>, RegExp]> = [
			[
				{ customerId: 'cust_1', currency: 'JPY', lineItems: [{ description: 'x', price: 1 }] },
				/Currency.*EUR, USD, GBP.*JPY/s,
			],
			[
				{ customerId: '42', currency: 'EUR', lineItems: [{ description: 'x', price: 1 }] },
				/Customer ID.*cust_123.*"42"/s,
			],
			[
				{ customerId: 'cust_1', currency: 'EUR', lineItems: [{ description: 'x', price: 'ten' }] },
				/line 1.*number with at most 2 decimals.*ten/s,
			],
		];
		for (const [args, message] of cases) {
			const r = await call(INVOICE, args);
			expect({ args, isError: r.isError, text: text(r) }).toEqual({
				args,
				isError: true,
				text: expect.stringMatching(message),
			});
		}
		expect(sandbox!.stats().requests.total).toBe(before);
	});

	test('an unknown customer id comes back as the service message, a duplicate e-mail as the 409 message', async () => {
		const unknown = await call(INVOICE, {
			customerId: 'cust_999999',
			currency: 'EUR',
			lineItems: [{ description: 'x', price: 1 }],
		});
		expect(unknown.isError).toBe(true);
		expect(text(unknown)).toMatch(/cust_999999/);

		const dup = await call(CUSTOMER, {
			firstName: 'Grace',
			lastName: 'Again',
			email: 'grace.hopper@example.com',
		});
		expect(dup.isError).toBe(true);
		expect(text(dup)).toContain(
			'A customer with the e-mail grace.hopper@example.com already exists',
		);
	});

	test('arguments that break the schema (missing email) or an unknown tool are refused readably', async () => {
		const missing = await call(CUSTOMER, {
			firstName: 'A',
			lastName: 'B',
		});
		expect(missing.isError).toBe(true);
		expect(text(missing)).toMatch(/email/);
		const unknownTool = await call('Delete_everything', { x: 1 }).catch((e: Error) => ({
			isError: true,
			content: [{ type: 'text', text: String(e.message) }],
		}));
		expect(unknownTool.isError).toBe(true);
		expect(text(unknownTool)).toMatch(/not found/i);
	});

	test('after the errors the server still works: a second customer and invoice go through', async () => {
		const created = await call(CUSTOMER, {
			firstName: 'Katherine',
			lastName: 'Johnson',
			email: 'katherine.johnson@example.com',
		});
		expect(created.isError).toBeFalsy();
		const customerId = /cust_\d+/.exec(text(created))?.[0];
		expect(customerId).toMatch(/^cust_\d+$/);
		const invoiced = await call(INVOICE, {
			customerId,
			currency: 'GBP',
			lineItems: [{ description: 'Orbital mechanics', price: 42 }],
		});
		expect(invoiced.isError).toBeFalsy();
		expect(sandbox!.records().invoices.map((i) => i.customerId)).toContain(customerId);
		// and a fresh session (another client) sees the same tools
		const other = new Client({ name: 'invoice-service-e2e-2', version: '1.0.0' });
		await other.connect(
			new StreamableHTTPClientTransport(new URL(`${server!.url}/mcp/${MCP_PATH}`)),
		);
		try {
			expect((await other.listTools()).tools.map((t) => t.name).sort()).toEqual([
				CUSTOMER,
				INVOICE,
			]);
		} finally {
			await other.close();
		}
	});
});
