// What the model is shown of the Invoice Service Tool, built with n8n-core's own createNodeAsTool (the function
// the AI Agent and the MCP Server Trigger call), for the three ways the fields can be held.
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { TOOL_DESCRIPTIONS } from '../../nodes/InvoiceService/actions/tool';
import { shownText, toolAsShown, toolVariant } from '../support/n8n-tool';
import { FORMATS_SHOWN, toolStates, type ToolResource } from '../support/tool-states';

const RESOURCES: ToolResource[] = ['customer', 'invoice'];
const NODE_NAMES: Record<ToolResource, string> = {
	customer: 'Create a customer in Invoice Service',
	invoice: 'Create an invoice in Invoice Service',
};
const states = toolStates({ customerId: 'cust_7', email: 'fixed@example.com' });

describe.each(states)('the model is shown the formats: $name', (state) => {
	test.each(RESOURCES)('%s tool', (resource) => {
		const tool = toolAsShown(
			new InvoiceService(),
			NODE_NAMES[resource],
			state.parameters[resource],
		);
		const text = shownText(tool);
		for (const format of FORMATS_SHOWN[resource])
			expect({ format, text }).toEqual({
				format,
				text: expect.stringMatching(format),
			});
		// The tool's own description carries them alone: empty placeholders and fixed fields add nothing.
		for (const format of FORMATS_SHOWN[resource]) expect(tool.description).toMatch(format);
	});
});

test('the arguments the model is asked for follow the fields: defaults described, placeholders bare, fixed none', () => {
	const [defaults, placeholders, fixed] = states;
	const invoice = (state: (typeof states)[number]) =>
		toolAsShown(new InvoiceService(), NODE_NAMES.invoice, state.parameters.invoice).arguments;
	expect(Object.keys(invoice(defaults)).sort()).toEqual(['currency', 'customerId', 'lineItems']);
	expect(invoice(defaults).currency).toMatch(/EUR, USD, GBP/);
	expect(invoice(placeholders)).toEqual({ Customer_ID: '', Currency: '', Line_Items__JSON_: '' });
	expect(invoice(fixed)).toEqual({});
});

test('a saved node that left Resource and Operation at their defaults gets the customer tool text', () => {
	const tool = toolAsShown(new InvoiceService(), NODE_NAMES.customer, {});
	expect(tool.description).toBe(TOOL_DESCRIPTIONS.customer.create);
});

test('the tool description is the node parameter: a text written by the user is given as written', () => {
	const tool = toolAsShown(new InvoiceService(), NODE_NAMES.invoice, {
		resource: 'invoice',
		operation: 'create',
		toolDescription: 'Bill a customer',
	});
	expect(tool.description).toBe('Bill a customer');
});

test('n8n adds no "Set Automatically" description of its own ("Create an invoice in Invoice Service")', () => {
	const names = toolVariant(new InvoiceService()).description.properties.map((p) => p.name);
	expect(names).not.toContain('descriptionType');
	// Without the node's own toolDescription, n8n's automatic one would be the action sentence alone.
	const bare = new InvoiceService();
	bare.description = {
		...bare.description,
		properties: bare.description.properties.filter((p) => p.name !== 'toolDescription'),
	};
	expect(toolAsShown(bare, NODE_NAMES.invoice, states[1].parameters.invoice).description).toBe(
		'Create an invoice in Invoice Service',
	);
});

test('the regular node keeps its panel: the tool description is shown only in the tool variant', () => {
	const own = new InvoiceService().description.properties.filter(
		(p) => p.name === 'toolDescription',
	);
	expect(own.length).toBe(2);
	for (const property of own) expect(property.displayOptions?.show?.['@tool']).toEqual([true]);
	const operation = new InvoiceService().description.properties.find(
		(p) => p.name === 'operation' && p.displayOptions?.show?.resource?.includes('invoice'),
	);
	expect(operation?.options).toEqual([expect.objectContaining({ action: 'Create an invoice' })]);
});
