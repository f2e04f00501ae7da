// The examples/ workflows a trigger starts (a Webhook, a Form Trigger) imported into a running n8n (`n8n start`,
// the packed package installed as a community node), published, and driven as a payment provider or a person
// would, against the sandbox, on every supported n8n version. The Manual Trigger examples run in
// invoice-service.test.ts (`n8n execute`).
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	NODE_TYPE,
	createN8nHome,
	ensureN8nInstalled,
	loadExample,
	nodesThatRan,
	outputJson,
	packPackage,
	removeHome,
	startN8nServer,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';
import {
	executionsStartedBy,
	postWebhook,
	publishWorkflows,
	saveCredential,
	type SavedExecution,
} from '../support/executions';

const MINUTE = 60_000;

type ExampleWorkflow = {
	name: string;
	nodes: Array<{ type: string; parameters: Record<string, unknown>; credentials?: unknown }>;
	connections: unknown;
};

/** An example as the editor's import gives it, its Invoice Service nodes set to `credential`. */
function example(file: string, credential: { id: string; name: string }): ExampleWorkflow {
	const workflow = loadExample(file) as ExampleWorkflow;
	for (const node of workflow.nodes) {
		if (node.type === NODE_TYPE) node.credentials = { invoiceServiceApi: credential };
	}
	return workflow;
}

/** Submits the form as a browser does: multipart/form-data, field-<n> in the order of the form's fields. */
async function submitForm(server: N8nServer, path: string, values: string[]): Promise<number> {
	const form = new FormData();
	values.forEach((value, index) => form.append(`field-${index}`, value));
	const res = await fetch(`${server.url}/form/${path}`, {
		method: 'POST',
		body: form,
		signal: AbortSignal.timeout(120_000),
	});
	await res.arrayBuffer();
	return res.status;
}

/** A payment provider's "order paid" event, as examples/webhook-customer-invoice.json expects it. */
const paidEvent = (id: string, email: string) => ({
	id,
	type: 'order.paid',
	customer: { firstName: 'Ada', lastName: 'Lovelace', email, company: 'Analytical Engines Ltd' },
	currency: 'EUR',
	lines: [
		{ description: `Consulting for ${id}`, price: 100.1 },
		{ description: 'Postage', price: 0.2 },
	],
});

describe.each(N8N_VERSIONS)(
	'examples/ with a Webhook or Form Trigger, in a running n8n %s',
	(version) => {
		let sandbox: Sandbox;
		let home: N8nHome;
		let server: N8nServer;
		let webhookWorkflowId = '';
		let formWorkflowId = '';

		beforeAll(async () => {
			await ensureN8nInstalled([version]);
			const tarball = await packPackage();
			sandbox = await startSandbox();
			home = await createN8nHome(version, tarball);
			server = await startN8nServer(home);
			await server.setupOwner();
			const credential = await saveCredential(server, 'Invoice Service (sandbox)', sandbox);
			[webhookWorkflowId, formWorkflowId] = await publishWorkflows(server, [
				example('webhook-customer-invoice.json', credential),
				example('form-customer-invoice.json', credential),
			]);
		}, 15 * MINUTE);

		afterAll(async () => {
			await server?.stop();
			await sandbox?.close();
			if (home) removeHome(home);
		});

		const customersWith = (email: string) =>
			sandbox.records().customers.filter((customer) => customer.email === email);
		const invoicesOf = (customerId: string | undefined) =>
			sandbox.records().invoices.filter((invoice) => invoice.customerId === customerId);
		const ranIn = (executions: SavedExecution[]) =>
			executions.map((execution) => nodesThatRan(execution.run));

		test('webhook example: the same event delivered twice, in turn, gives one customer and one invoice; the second stops at "Event already handled"', async () => {
			const email = `ada.turn.${version}@example.com`;
			const event = paidEvent(`evt_turn_${version}`, email);
			const [first] = await executionsStartedBy(server, webhookWorkflowId, () =>
				postWebhook(server, 'invoice-events', event),
			);
			const [second] = await executionsStartedBy(server, webhookWorkflowId, () =>
				postWebhook(server, 'invoice-events', event),
			);
			expect([first.status, second.status]).toEqual(['success', 'success']);
			expect(ranIn([first, second])).toEqual([
				expect.arrayContaining(['Create customer', 'Create invoice', 'Invoice created']),
				expect.arrayContaining(['Create customer', 'Event already handled']),
			]);
			expect(nodesThatRan(second.run)).not.toContain('Create invoice');
			const customers = customersWith(email);
			expect(customers).toHaveLength(1);
			const invoices = invoicesOf(customers[0]?.id);
			expect(invoices).toHaveLength(1);
			expect(invoices[0]).toMatchObject({ amount: 100.3, currency: 'EUR' });
			expect(outputJson(first.run, 'Invoice created')).toEqual([
				expect.objectContaining({ invoice_id: invoices[0].id }),
			]);
			expect(outputJson(second.run, 'Event already handled')).toHaveLength(1);
		});

		test('webhook example: the same event delivered twice at the same moment gives one customer and one invoice', async () => {
			const email = `ada.together.${version}@example.com`;
			const event = paidEvent(`evt_together_${version}`, email);
			const executions = await executionsStartedBy(
				server,
				webhookWorkflowId,
				() =>
					Promise.all([
						postWebhook(server, 'invoice-events', event),
						postWebhook(server, 'invoice-events', event),
					]),
				2,
			);
			expect(executions.map((execution) => execution.status)).toEqual(['success', 'success']);
			const customers = customersWith(email);
			expect(customers).toHaveLength(1);
			expect(invoicesOf(customers[0]?.id)).toHaveLength(1);
			expect(ranIn(executions).filter((ran) => ran.includes('Invoice created')).length).toBe(1);
		});

		test('form example: a submission becomes a customer and an invoice priced from the chosen service; the same e-mail again goes to "Not created" with the 409 reason', async () => {
			const email = `grace.form.${version}@example.com`;
			const values = ['Grace', 'Hopper', email, 'Workshop (half day)'];
			const [first] = await executionsStartedBy(server, formWorkflowId, async () =>
				expect(await submitForm(server, 'invoice-request', values)).toBe(200),
			);
			expect(first.status).toBe('success');
			const customers = customersWith(email);
			expect(customers).toEqual([
				expect.objectContaining({ firstName: 'Grace', lastName: 'Hopper' }),
			]);
			const invoices = invoicesOf(customers[0].id);
			expect(invoices).toEqual([
				expect.objectContaining({
					amount: 450,
					currency: 'EUR',
					items: [expect.objectContaining({ description: 'Workshop (half day)', price: 450 })],
				}),
			]);
			expect(invoices[0]).not.toMatchObject({ sendEmail: true });

			const [again] = await executionsStartedBy(server, formWorkflowId, async () =>
				expect(await submitForm(server, 'invoice-request', values)).toBe(200),
			);
			expect(nodesThatRan(again.run)).toContain('Not created (e-mail already a customer)');
			expect(nodesThatRan(again.run)).not.toContain('Create invoice');
			const [refused] = outputJson(again.run, 'Not created (e-mail already a customer)');
			expect(refused.error).toMatchObject({
				httpCode: '409',
				message: `A customer with the e-mail ${email} already exists`,
			});
			expect(customersWith(email)).toHaveLength(1);
		});
	},
);
