import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	NodeParameterValueType,
} from 'n8n-workflow';

/**
 * The node as an AI tool. For `usableAsTool`, n8n generates a second node type, "Invoice Service Tool"
 * (`invoiceServiceTool`), whose input schema comes only from the `$fromAI()` calls in its parameters. n8n's
 * editor writes `$fromAI()` with an empty description and offers it for no dropdown, so a model would not know
 * the formats and could not pick a currency. The tool variant therefore starts with every argument already
 * "defined automatically by the model", each with a description that states its format: parameters shown only
 * in the tool variant (display option `@tool`), so the regular node's editor is unchanged.
 */

/** The comment n8n's editor puts in the `$fromAI()` it writes; with it the editor shows the "✨ model" pill. */
const FROM_AI_MARKER = '/*n8n-auto-generated-fromAI-override*/';

/** The expression n8n's editor writes for "Let the model define this parameter", with a description. */
export function fromAI(key: string, description: string, type: 'string' | 'json'): string {
	return `={{ ${FROM_AI_MARKER} $fromAI('${key}', \`${description}\`, '${type}') }}`;
}

/** What the model is told about each argument (the descriptions in the tool's input schema). */
export const TOOL_ARGUMENTS = {
	firstName: "The customer's first name",
	lastName: "The customer's last name",
	email:
		"The customer's business e-mail address, like name@example.com; it must not belong to an existing customer",
	customerId:
		'The ID of the customer to invoice, like cust_123: the id returned when the customer was created',
	currency: 'The currency of the invoice, one of EUR, USD, GBP',
	lineItems:
		'The invoice lines, a JSON array like [{"description": "Consulting", "price": 100.5}]: "description" is text, "price" a number excluding VAT with at most 2 decimals (negative for a discount). The invoice amount, excluding VAT, is the sum of the prices and must be greater than 0',
} as const;

/**
 * What the model is told the tool does, per resource and operation: the formats of every argument, so that the
 * model knows them whatever the fields hold. n8n puts only this text and the `$fromAI()` descriptions in front
 * of the model, and a field switched to "defined automatically by the model" in the editor, or saved before the
 * defaults above, carries an empty `$fromAI()` description; a fixed field gives no argument at all.
 */
export const TOOL_DESCRIPTIONS: Record<string, Record<string, string>> = {
	customer: {
		create: [
			'Create a customer in Invoice Service.',
			`- first name: ${TOOL_ARGUMENTS.firstName}`,
			`- last name: ${TOOL_ARGUMENTS.lastName}`,
			`- e-mail: ${TOOL_ARGUMENTS.email}`,
			"It answers with the new customer's id (like cust_123: the customer ID to invoice them), name and email.",
		].join('\n'),
	},
	invoice: {
		create: [
			'Create an invoice for an existing customer in Invoice Service; the service makes a PDF and can e-mail it.',
			`- customer ID: ${TOOL_ARGUMENTS.customerId}`,
			`- currency: ${TOOL_ARGUMENTS.currency}`,
			`- line items: ${TOOL_ARGUMENTS.lineItems}`,
			'It answers with invoice_id, status and download_url (the PDF).',
		].join('\n'),
	},
};

/**
 * The tool variant's "Description" field, one per operation, filled with TOOL_DESCRIPTIONS. n8n adds its own
 * "Tool Description" (Set Automatically: "<action> in Invoice Service", no formats) only to a node without a
 * `toolDescription` parameter, and gives the model a non-empty `toolDescription` as it is (both versions; see
 * test/e2e-mcp/README.md). Shown only in the tool variant (`@tool`): the regular node is unchanged.
 */
export function toolDescriptionProperties(): INodeProperties[] {
	return Object.entries(TOOL_DESCRIPTIONS).flatMap(([resource, operations]) =>
		Object.entries(operations).map(([operation, text]) => ({
			displayName: 'Description',
			name: 'toolDescription',
			type: 'string',
			default: text,
			required: true,
			typeOptions: { rows: 6 },
			description:
				'What the AI model is told about this tool, with the formats of its arguments. Fields set to a fixed value are not asked of the model.',
			displayOptions: { show: { resource: [resource], operation: [operation], '@tool': [true] } },
		})),
	);
}

/** Per resource, the value each field starts with in the tool variant. */
const TOOL_DEFAULTS: Record<string, Record<string, NodeParameterValueType>> = {
	customer: {
		firstName: fromAI('firstName', TOOL_ARGUMENTS.firstName, 'string'),
		lastName: fromAI('lastName', TOOL_ARGUMENTS.lastName, 'string'),
		email: fromAI('email', TOOL_ARGUMENTS.email, 'string'),
	},
	invoice: {
		customerId: fromAI('customerId', TOOL_ARGUMENTS.customerId, 'string'),
		currency: fromAI('currency', TOOL_ARGUMENTS.currency, 'string'),
		// A model hands over lines as one JSON argument, so the tool starts in "Using JSON" mode.
		lineItemsMode: 'json',
		lineItemsJson: fromAI('lineItems', TOOL_ARGUMENTS.lineItems, 'json'),
	},
};

/**
 * Gives each field listed in TOOL_DEFAULTS a twin shown only in the tool variant, with the tool default; the
 * original is hidden there. Same name, so the operations read one parameter whichever is shown.
 */
export function withToolDefaults(properties: INodeProperties[]): INodeProperties[] {
	return properties.flatMap((property) => {
		const show = property.displayOptions?.show ?? {};
		const resource = String(show.resource?.[0] ?? '');
		const toolDefault = TOOL_DEFAULTS[resource]?.[property.name];
		if (toolDefault === undefined) return [property];
		return [
			{
				...property,
				displayOptions: {
					...property.displayOptions,
					hide: { ...property.displayOptions?.hide, '@tool': [true] },
				},
			},
			{
				...property,
				default: toolDefault,
				displayOptions: { ...property.displayOptions, show: { ...show, '@tool': [true] } },
			},
		];
	});
}

/** The fields of the service's answer that the model gets back: ids, status and the PDF's address. */
const ANSWER_FIELDS: Record<string, string[]> = {
	customer: ['id', 'name', 'email'],
	invoice: ['invoice_id', 'status', 'download_url'],
};

/** Whether this run is the tool variant answering a model (AI Agent, MCP Server Trigger). */
export function isToolRun(context: IExecuteFunctions): boolean {
	return context.getNode().type.endsWith('Tool');
}

/**
 * The answer for the model, in one output (a tool has one): only the useful fields, no file (n8n drops binary
 * data for agents anyway). An error item (On Error: Continue) keeps its message and description, which name the
 * field and what to fix; an item whose Idempotency Key was used before says so, with its key.
 */
export function toolAnswers(
	context: IExecuteFunctions,
	output: INodeExecutionData[][],
): INodeExecutionData[][] {
	const resource = context.getNodeParameter('resource', 0) as string;
	const fields = ANSWER_FIELDS[resource] ?? [];
	const answers = output.flat().map(({ json, pairedItem }) => {
		if (json.error !== undefined) return { json: { error: json.error }, pairedItem };
		if (json.alreadyCreated === true) return { json, pairedItem };
		const answer: IDataObject = {};
		for (const field of fields) if (json[field] !== undefined) answer[field] = json[field];
		return { json: answer, pairedItem };
	});
	return [answers.sort((a, b) => itemOf(a.pairedItem) - itemOf(b.pairedItem))];
}

function itemOf(pairedItem: INodeExecutionData['pairedItem']): number {
	return typeof pairedItem === 'object' && !Array.isArray(pairedItem) ? pairedItem.item : 0;
}
