// The Agent route: n8n's real AI Agent with its OpenAI Chat Model node, the model being a stand-in on loopback
// (test/support/stand-in-model.ts) that records the tools list n8n sends it and calls the Invoice Service tools.
// For each way the tool nodes can hold their fields (current defaults, empty-description `$fromAI()`
// placeholders, fixed values), the model must be shown the formats, and its tool calls must really create the
// customer and the invoice in the sandbox.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	PACKAGE_NAME,
	createN8nHome,
	ensureN8nInstalled,
	invoiceServiceCredential,
	nodeOutput,
	packPackage,
	removeHome,
	runWorkflows,
	type N8nHome,
	type RunWorkflowsResult,
} from '../../tools/n8n';
import {
	startStandInModel,
	type ModelReply,
	type ModelRequest,
	type OpenAiTool,
	type StandInModel,
} from '../support/stand-in-model';
import { FORMATS_SHOWN, toolStates, type ToolResource } from '../support/tool-states';

const MINUTE = 60_000;
const TOOL_TYPE = `${PACKAGE_NAME}.invoiceServiceTool`;
const INVOICE_CREDENTIAL = { id: 'credAgentSandbox', name: 'Invoice Service (sandbox)' };
const MODEL_CREDENTIAL = { id: 'credStandInModel', name: 'Stand-in model' };
/** n8n's default node names when the tools are added from the action list. */
const TOOL_NODES: Record<ToolResource, string> = {
	customer: 'Create a customer in Invoice Service',
	invoice: 'Create an invoice in Invoice Service',
};
const AGENT = 'AI Agent';
/** The AI Agent a user adds in each version (its default version there). */
const AGENT_VERSION: Record<string, number> = { '2': 3.1, '1': 3 };

/** Every argument the stand-in model fills, by what its name says (the key differs per state). */
function argumentsFor(tool: OpenAiTool, email: string, customerId: string) {
	const values: Array<[RegExp, unknown]> = [
		[/first/i, 'Ada'],
		[/last/i, 'Agent'],
		[/mail/i, email],
		[/customer/i, customerId],
		[/currency/i, 'GBP'],
		[/line/i, [{ description: 'Agent work', price: 12.34 }]],
	];
	const keys = Object.keys(tool.function.parameters?.properties ?? {});
	return Object.fromEntries(
		keys.map((key) => [key, values.find(([pattern]) => pattern.test(key))?.[1] ?? 'unknown']),
	);
}

const stateTag = (index: number) => `[state ${index}]`;
const agentEmail = (index: number) => `agent.${index}@example.com`;

/**
 * The stand-in model: first it creates the customer, then it invoices the id the tool answered, then it ends
 * with a text. Which state's workflow is asking is in the user's prompt.
 */
function script(request: ModelRequest): ModelReply {
	const prompt = JSON.stringify(request.messages.filter((m) => m.role !== 'tool'));
	const index = Number(/\[state (\d+)\]/.exec(prompt)?.[1] ?? -1);
	const toolAnswers = request.messages
		.filter((m) => m.role === 'tool')
		.map((m) => String(m.content));
	const find = (word: string) => request.tools.find((t) => t.function.name.includes(word))!;
	if (toolAnswers.length === 0) {
		const tool = find('customer');
		return {
			toolCall: { name: tool.function.name, arguments: argumentsFor(tool, agentEmail(index), '') },
		};
	}
	if (toolAnswers.length === 1) {
		const tool = find('invoice');
		const customerId = /cust_\d+/.exec(toolAnswers[0])?.[0] ?? 'no customer id in the answer';
		return {
			toolCall: { name: tool.function.name, arguments: argumentsFor(tool, '', customerId) },
		};
	}
	return { text: `Done: ${toolAnswers[1]}` };
}

function agentWorkflow(index: number, version: string, parameters: Record<ToolResource, object>) {
	const node = (
		name: string,
		type: string,
		typeVersion: number,
		params: object,
		x: number,
		y = 0,
	) => ({
		id: `a9e0000${index}-0000-4000-8000-${String(x + 1000).padStart(12, '0')}`,
		name,
		type,
		typeVersion,
		position: [x, y],
		parameters: params,
	});
	const toolNode = (resource: ToolResource, x: number) => ({
		...node(TOOL_NODES[resource], TOOL_TYPE, 1, parameters[resource], x, 200),
		credentials: { invoiceServiceApi: INVOICE_CREDENTIAL },
	});
	const toAgent = (type: string) => ({ [type]: [[{ node: AGENT, type, index: 0 }]] });
	return {
		id: `agentTools${index}`,
		name: `Agent with Invoice Service tools ${index}`,
		nodes: [
			node('Start', 'n8n-nodes-base.manualTrigger', 1, {}, 0),
			node(
				AGENT,
				'@n8n/n8n-nodes-langchain.agent',
				AGENT_VERSION[version.split('.')[0]],
				{
					promptType: 'define',
					text: `${stateTag(index)} Create the customer Ada Agent and invoice her 12.34 GBP for agent work.`,
					options: {},
				},
				200,
			),
			{
				...node(
					'OpenAI Chat Model',
					'@n8n/n8n-nodes-langchain.lmChatOpenAi',
					1.2,
					{ model: { __rl: true, mode: 'id', value: 'stand-in' }, options: {} },
					100,
					200,
				),
				credentials: { openAiApi: MODEL_CREDENTIAL },
			},
			toolNode('customer', 300),
			toolNode('invoice', 400),
		],
		connections: {
			Start: { main: [[{ node: AGENT, type: 'main', index: 0 }]] },
			'OpenAI Chat Model': toAgent('ai_languageModel'),
			[TOOL_NODES.customer]: toAgent('ai_tool'),
			[TOOL_NODES.invoice]: toAgent('ai_tool'),
		},
		settings: { executionOrder: 'v1' },
	};
}

/** Creates a customer straight in the sandbox, for the state whose invoice tool has a fixed customer id. */
async function existingCustomer(sandbox: Sandbox): Promise<string> {
	const res = await fetch(`${sandbox.baseUrl}/create-customer`, {
		method: 'POST',
		headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			first_name: 'Fixed',
			last_name: 'Customer',
			email: 'existing@example.com',
		}),
	});
	const id = /cust_\d+/.exec(await res.text())?.[0];
	if (!id) throw new Error(`the sandbox created no customer: HTTP ${res.status}`);
	return id;
}

describe.each(N8N_VERSIONS)('the AI Agent is shown the formats, in a real n8n %s', (version) => {
	let home: N8nHome | undefined;
	let sandbox: Sandbox | undefined;
	let model: StandInModel | undefined;
	let result: RunWorkflowsResult | undefined;
	let fixedCustomerId = '';
	const states = () =>
		toolStates({ customerId: fixedCustomerId, email: 'fixed.values@example.com' });

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		sandbox = await startSandbox();
		model = await startStandInModel(script);
		fixedCustomerId = await existingCustomer(sandbox);
		home = await createN8nHome(version, tarball);
		result = await runWorkflows(home, {
			credentials: [
				invoiceServiceCredential(INVOICE_CREDENTIAL, sandbox),
				{
					...MODEL_CREDENTIAL,
					type: 'openAiApi',
					data: { apiKey: 'stand-in', url: model.baseUrl },
				},
			],
			workflows: states().map((state, index) => agentWorkflow(index, version, state.parameters)),
			log: (line) => console.log(`[agent e2e ${version}] ${line}`),
		});
	}, 20 * MINUTE);

	afterAll(async () => {
		await model?.close();
		await sandbox?.close();
		if (home) removeHome(home);
	});

	const requestsOf = (index: number) =>
		model!.requests.filter((r) => JSON.stringify(r.messages).includes(stateTag(index)));

	const stateNames = toolStates({ customerId: '', email: '' }).map((state, index) => ({
		name: state.name,
		index,
	}));
	describe.each(stateNames)('$name', ({ index }) => {
		const state = () => states()[index];

		test("the workflow runs to the agent's final answer after two tool calls", () => {
			const run = result!.results[`agentTools${index}`];
			expect({
				state: state().name,
				code: run.code,
				error: run.run?.data.resultData.error,
			}).toEqual({
				state: state().name,
				code: 0,
				error: undefined,
			});
			expect(requestsOf(index)).toHaveLength(3);
			const answer = nodeOutput(run.run, AGENT)[0]?.json.output;
			expect(answer).toEqual(expect.stringMatching(/^Done: .*inv_\d+/));
		});

		test('the tools list the model is sent carries every format', () => {
			const [first] = requestsOf(index);
			expect(first.tools.map((t) => t.function.name).sort()).toEqual([
				'Create_a_customer_in_Invoice_Service',
				'Create_an_invoice_in_Invoice_Service',
			]);
			for (const resource of ['customer', 'invoice'] as ToolResource[]) {
				const tool = first.tools.find((t) => t.function.name.includes(resource))!;
				const text = [
					tool.function.description ?? '',
					...Object.entries(tool.function.parameters?.properties ?? {}).map(
						([key, p]) => `${key}: ${p.description ?? ''}`,
					),
				].join('\n');
				for (const format of FORMATS_SHOWN[resource]) {
					expect({ resource, format, text }).toEqual({
						resource,
						format,
						text: expect.stringMatching(format),
					});
				}
			}
		});

		test('the tool calls really created the customer and the invoice in the sandbox', () => {
			const { customers, invoices } = sandbox!.records();
			const fixed = state().name === 'fixed values';
			const email = fixed ? 'fixed.values@example.com' : agentEmail(index);
			const customer = customers.find((c) => c.email === email);
			expect(customer).toBeDefined();
			const invoiced = fixed ? fixedCustomerId : customer!.id;
			const invoice = invoices.find((i) => i.customerId === invoiced);
			expect(invoice).toMatchObject(
				fixed
					? { currency: 'USD', amount: 42.5 }
					: { currency: 'GBP', amount: 12.34, items: [expect.objectContaining({ price: 12.34 })] },
			);
		});
	});
});
