// Proves the real-n8n driver with n8n's own nodes only (no Invoice Service node, no sandbox): credentials
// import, workflow import, `execute --rawOutput` parsing, success and failure. When the Invoice Service e2e
// fails, this test tells whether the harness or the node is at fault.
import {
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	nodeError,
	nodeOutput,
	outputJson,
	removeHome,
	runWorkflows,
	type N8nHome,
	type RunWorkflowsResult,
} from '../../tools/n8n';

const MINUTE = 60_000;
const TRIGGER = 'When clicking ‘Execute workflow’';

function manualThen(id: string, name: string, node: Record<string, unknown>) {
	return {
		id,
		name,
		nodes: [
			{
				parameters: {},
				id: `${id}-t`,
				name: TRIGGER,
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
			},
			{ id: `${id}-n`, position: [220, 0], ...node },
		],
		connections: {
			[TRIGGER]: { main: [[{ node: node.name, type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

describe.each(N8N_VERSIONS)('real n8n %s driver (n8n nodes only)', (version) => {
	let home: N8nHome;
	let batch: RunWorkflowsResult;

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		home = await createN8nHome(version);
		batch = await runWorkflows(home, {
			credentials: [
				{
					id: 'driverBasicAuth1',
					name: 'Driver basic auth',
					type: 'httpBasicAuth',
					data: { user: 'someone', password: 'not-a-secret' },
				},
			],
			workflows: [
				manualThen('driverSet1', 'Driver: set fields', {
					name: 'Set',
					type: 'n8n-nodes-base.set',
					typeVersion: 3.4,
					parameters: {
						assignments: {
							assignments: [
								{ id: 'a1', name: 'greeting', value: 'hello', type: 'string' },
								{ id: 'a2', name: 'sum', value: '={{ 100.1 + 0.2 }}', type: 'number' },
							],
						},
						options: {},
					},
				}),
				manualThen('driverStop1', 'Driver: stop and error', {
					name: 'Stop',
					type: 'n8n-nodes-base.stopAndError',
					typeVersion: 1,
					parameters: { errorMessage: 'planned failure 42' },
				}),
			],
		});
	}, 20 * MINUTE);

	afterAll(() => {
		if (home) removeHome(home);
	});

	test('a successful workflow exits 0 and its node output is parsed', () => {
		const r = batch.results.driverSet1;
		expect(r.code).toBe(0);
		expect(r.run).toBeDefined();
		expect(outputJson(r.run, 'Set')).toEqual([{ greeting: 'hello', sum: 100.3 }]);
		expect(nodeOutput(r.run, 'Set')[0].pairedItem).toBeDefined();
	});

	test('a failing workflow exits 1 and the failing node error is readable', () => {
		const r = batch.results.driverStop1;
		expect(r.code).toBe(1);
		expect(r.run).toBeDefined();
		expect(nodeError(r.run, 'Stop')?.message).toBe('planned failure 42');
	});
});
