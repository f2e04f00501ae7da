// The output schemas n8n's editor shows before a run (schema preview, drag-and-drop mapping) must be what the
// node really returns: each operation runs in-process against the sandbox (both answer styles), as the node and
// as the AI tool variant, and its output must match its schema exactly (no field missing, none extra).
import { startSandbox, type Sandbox } from '../../sandbox/server';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { readOutputSchema, schemaMismatches } from '../support/output-schema';
import {
	customerParameters,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

const VERSION = new InvoiceService().description.version as number;
let customers = 0;

describe.each(['plain', 'bubble'] as const)('output schemas against the %s service', (style) => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await startSandbox({ style });
	});
	afterAll(async () => {
		await sandbox.close();
	});

	const run = (parameters: Parameters<typeof runInvoiceService>[0]['parameters'], asTool = false) =>
		runInvoiceService({
			parameters,
			items: [{ first: 'Ada', last: 'Lovelace', email: `ada.${++customers}@example.com` }],
			credentials: { baseUrl: sandbox.rootUrl, apiKey: sandbox.apiKey, allowHttp: true },
			asTool,
		});

	it.each([false, true])(
		'customer → create (as a tool: %s) returns what its schema says',
		async (asTool) => {
			const result = await run(customerParameters(), asTool);
			expect(result.error).toBeUndefined();
			const [item] = result.outputs[0];
			expect(schemaMismatches(readOutputSchema(VERSION, 'customer', 'create'), item.json)).toEqual(
				[],
			);
		},
	);

	it.each([false, true])(
		'invoice → create (as a tool: %s) returns what its schema says',
		async (asTool) => {
			const customer = await run(customerParameters(), asTool);
			const customerId = customer.outputs[0][0].json.id as string;
			const result = await run(invoiceParameters({ customerId }), asTool);
			expect(result.error).toBeUndefined();
			const [item] = result.outputs[0];
			expect(schemaMismatches(readOutputSchema(VERSION, 'invoice', 'create'), item.json)).toEqual(
				[],
			);
		},
	);

	it('the check itself catches a field too many and one too few', () => {
		const schema = readOutputSchema(VERSION, 'invoice', 'create');
		expect(schemaMismatches(schema, { invoice_id: 'inv_1', status: 'sent', total: 3 })).toEqual([
			'the output has "total", which the schema does not name',
			'the schema names "download_url", which the output lacks',
		]);
		expect(
			schemaMismatches(schema, { invoice_id: 'x', status: 'sent', download_url: 'u' }),
		).toEqual(['"invoice_id" (x) does not match ^inv_\\d+$']);
	});
});
