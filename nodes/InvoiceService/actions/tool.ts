import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { allOperations, findOperation } from './resources';

/**
 * The node as an AI tool. For `usableAsTool`, n8n generates a second node type, "Invoice Service Tool"
 * (`invoiceServiceTool`), whose input schema comes only from the `$fromAI()` calls in its parameters. n8n's
 * editor writes `$fromAI()` with an empty description and offers it for no dropdown, so a model would not know
 * the formats and could not pick a currency. The tool variant therefore starts with every argument already
 * "defined automatically by the model", each with a description that states its format: parameters shown only
 * in the tool variant (display option `@tool`), so the regular node's editor is unchanged.
 */

/**
 * What the model is told the tool does, per resource and operation (each operation's `tool.description`): the
 * formats of every argument, so that the model knows them whatever the fields hold. A fixed field gives no
 * argument at all.
 */
export const TOOL_DESCRIPTIONS: Record<string, Record<string, string>> = {};
for (const { resource, name, operation } of allOperations())
	(TOOL_DESCRIPTIONS[resource] ??= {})[name] = operation.tool.description;

/**
 * The tool variant's "Description" field, one per operation, filled with its `tool.description`. n8n adds its own
 * "Tool Description" (Set Automatically: "<action> in Invoice Service", no formats) only to a node without a
 * `toolDescription` parameter, and gives the model a non-empty `toolDescription` as it is (both versions; see
 * test/e2e-mcp/README.md). Shown only in the tool variant (`@tool`): the regular node is unchanged.
 */
export function toolDescriptionProperties(): INodeProperties[] {
	return allOperations().map(({ resource, name, operation }) => {
		const text = operation.tool.description;
		return {
			displayName: 'Description',
			name: 'toolDescription',
			type: 'string',
			default: text,
			required: true,
			typeOptions: { rows: 6 },
			description:
				'What the AI model is told about this tool, with the formats of its arguments. Fields set to a fixed value are not asked of the model.',
			displayOptions: { show: { resource: [resource], operation: [name], '@tool': [true] } },
		};
	});
}

/**
 * Gives each field its operation lists in `tool.defaults` a twin shown only in the tool variant, with the tool
 * default; the original is hidden there. Same name, so the operations read one parameter whichever is shown.
 */
export function withToolDefaults(properties: INodeProperties[]): INodeProperties[] {
	return properties.flatMap((property) => {
		const show = property.displayOptions?.show ?? {};
		const operation = findOperation(String(show.resource?.[0]), String(show.operation?.[0]));
		const toolDefault = operation?.tool.defaults[property.name];
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
	const operation = findOperation(
		context.getNodeParameter('resource', 0) as string,
		context.getNodeParameter('operation', 0) as string,
	);
	const fields = operation?.tool.answerFields ?? [];
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
