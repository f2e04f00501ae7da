// What a model is shown of a usableAsTool node, built the way n8n builds it: the tool variant's description
// as n8n's node loader derives it, the node's parameters completed with defaults by n8n-workflow's `Workflow`,
// and the tool made by n8n-core's own `createNodeAsTool` (what the AI Agent and the MCP Server Trigger call).
import { createNodeAsTool } from 'n8n-core/dist/execution-engine/node-execution-context/utils/create-node-as-tool';
import {
	NodeConnectionTypes,
	Workflow,
	deepCopy,
	type INodeParameters,
	type INodeProperties,
	type INodeType,
	type INodeTypes,
} from 'n8n-workflow';

/**
 * The tool variant, as n8n's `convertNodeToAiTool` makes it (n8n 2.41.1: `dist/load-nodes-and-credentials` ai-tools
 * in the `n8n` package; 1.123.81: n8n-workflow `NodeHelpers`): the name gets `Tool`, the output becomes
 * `ai_tool`, and a node WITHOUT its own `toolDescription` parameter gets n8n's "Tool Description" (Set
 * Automatically / Set Manually, the manual text defaulting to the node's description).
 */
export function toolVariant(nodeType: INodeType): INodeType {
	const description = deepCopy(nodeType.description);
	description.name += 'Tool';
	description.displayName += ' Tool';
	description.inputs = [];
	description.outputs = [NodeConnectionTypes.AiTool];
	delete description.usableAsTool;
	if (!description.properties.some((property) => property.name === 'toolDescription')) {
		const descriptionType: INodeProperties = {
			displayName: 'Tool Description',
			name: 'descriptionType',
			type: 'options',
			noDataExpression: true,
			options: [
				{ name: 'Set Automatically', value: 'auto' },
				{ name: 'Set Manually', value: 'manual' },
			],
			default: 'auto',
		};
		const toolDescription: INodeProperties = {
			displayName: 'Description',
			name: 'toolDescription',
			type: 'string',
			default: description.description,
			displayOptions: { show: { descriptionType: ['manual'] } },
		};
		description.properties.unshift(descriptionType, toolDescription);
	}
	return { description, execute: nodeType.execute };
}

export interface ToolAsShown {
	name: string;
	description: string;
	/** Argument name → its description (empty when the `$fromAI()` has none). */
	arguments: Record<string, string>;
}

/** The tool a model gets for a tool node with these saved parameters. */
export function toolAsShown(
	nodeType: INodeType,
	nodeName: string,
	parameters: INodeParameters,
): ToolAsShown {
	const tool = toolVariant(nodeType);
	const nodeTypes: INodeTypes = {
		getByName: () => tool,
		getByNameAndVersion: () => tool,
		getKnownTypes: () => ({}),
	};
	// The Workflow completes the saved parameters with the tool variant's defaults, as at every run.
	const workflow = new Workflow({
		nodes: [
			{
				id: '7a1b2c3d-0000-4000-8000-000000000001',
				name: nodeName,
				type: `n8n-nodes-invoice-service.${tool.description.name}`,
				typeVersion: 1,
				position: [0, 0],
				parameters: deepCopy(parameters),
			},
		],
		connections: {},
		active: false,
		nodeTypes,
	});
	const { response } = createNodeAsTool({
		node: workflow.getNode(nodeName)!,
		nodeType: tool,
		handleToolInvocation: async () => '',
	});
	const shape = response.schema.shape as Record<string, { description?: string }>;
	return {
		name: response.name,
		description: response.description,
		arguments: Object.fromEntries(
			Object.entries(shape).map(([key, value]) => [key, value.description ?? '']),
		),
	};
}

/** Everything the model reads about a tool, as one text. */
export function shownText(tool: {
	description: string;
	arguments: Record<string, string>;
}): string {
	return [tool.description, ...Object.entries(tool.arguments).map(([k, v]) => `${k}: ${v}`)].join(
		'\n',
	);
}
