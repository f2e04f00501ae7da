// Every answer of the service is read with a limit, in a real n8n (both supported majors), the packed package
// installed as a community node: five customers at once (the default Concurrency), each created and then
// answered with a 200 HTML page that never ends (the sandbox's endlessPage fault, what a broken proxy sends).
// Each item fails at the limit as an unknown outcome, every socket is closed, and the memory n8n gains while it
// runs stays that of the same run answered normally, within a few MiB (measured in the `n8n execute` process
// itself, from its first request to the service: n8n's start, which sets the process's peak, moves by tens of MiB
// from one run to the next).
import * as path from 'node:path';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	invoiceServiceCredential,
	nodeOutput,
	packPackage,
	removeHome,
	runWorkflows,
	type N8nHome,
	type RunWorkflowsResult,
	type WorkflowResult,
} from '../../tools/n8n';
import { SERVICE, customerWorkflow, person } from '../support/customer-workflow';

const MINUTE = 60_000;
const MIB = 1024 * 1024;
const PEAK_RSS = path.join(REPO_ROOT, 'test', 'support', 'preload', 'peak-rss.js');
/** How much more the endless run may gain than the normal run: "a few MiB", with room for GC's noise. */
const ALLOWED_GROWTH = 32 * MIB;

/** One number the preload printed for the `n8n execute` process (`[peak-rss]` in KiB, `[run-rss-growth]` in bytes). */
function printed(result: WorkflowResult, label: 'peak-rss' | 'run-rss-growth'): number {
	const lines = [...result.stderr.matchAll(new RegExp(`\\[${label}\\] (-?\\d+)`, 'g'))];
	if (lines.length !== 1) throw new Error(`expected one [${label}] line, got ${lines.length}`);
	return Number(lines[0][1]) * (label === 'peak-rss' ? 1024 : 1);
}

describe.each(N8N_VERSIONS)('every answer bounded in a real n8n %s', (version) => {
	let home: N8nHome;
	let normal: Sandbox;
	let endless: Sandbox;
	let batch: RunWorkflowsResult;
	const customers = (prefix: string) =>
		[1, 2, 3, 4, 5].map((n) => person(`${prefix}${n}@example.com`));

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		normal = await startSandbox();
		endless = await startSandbox({ faults: { endlessPage: 1 } });
		home = await createN8nHome(version, tarball);
		batch = await runWorkflows(home, {
			credentials: [
				invoiceServiceCredential({ id: 'credNormalA00001', name: 'normal' }, normal),
				invoiceServiceCredential({ id: 'credEndlessA0001', name: 'endless' }, endless),
			],
			workflows: [
				customerWorkflow('wfNormalAnswers1', 'credNormalA00001', customers('normal'), {}),
				customerWorkflow('wfEndlessPages01', 'credEndlessA0001', customers('endless'), {}),
			],
			env: { NODE_OPTIONS: `--require=${PEAK_RSS}` },
		});
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all([normal?.close(), endless?.close()]);
		if (home) removeHome(home);
	});

	test('each page is stopped at 64 KB: the item fails as an unknown outcome, nothing is sent again', () => {
		const { run } = batch.results.wfEndlessPages01;
		expect(nodeOutput(run, SERVICE, 0)).toHaveLength(0);
		const failed = nodeOutput(run, SERVICE, 1);
		expect(failed).toHaveLength(5);
		for (const item of failed) {
			const error = item.json.error as Record<string, string>;
			expect(error.message).toMatch(
				/^The answer to create-customer was larger than 64 KB \(HTTP 200, text\/html; reading stopped there\)$/,
			);
			expect(error.description).toMatch(/Check the Base URL .* Outcome unknown/);
		}
		const stats = endless.stats();
		expect(stats.customers).toBe(5);
		expect(stats.requests.total).toBe(5);
		expect(stats.faults.endlessPage).toBe(5);
	});

	test('every connection is closed by the node, none left writing', () => {
		const stats = endless.stats();
		expect(stats.abortedResponses).toBe(5);
		expect(stats.openConnections).toBe(0);
	});

	test('the memory n8n gains while it runs stays within a few MiB of the same run answered normally', () => {
		expect(nodeOutput(batch.results.wfNormalAnswers1.run, SERVICE, 0)).toHaveLength(5);
		const [normalRun, endlessRun] = [
			batch.results.wfNormalAnswers1,
			batch.results.wfEndlessPages01,
		];
		const base = printed(normalRun, 'run-rss-growth');
		const withPages = printed(endlessRun, 'run-rss-growth');
		const mib = (bytes: number) => (bytes / MIB).toFixed(1);
		console.log(
			`[answer-limit] n8n ${version}: resident memory gained from the first request ${mib(base)} MiB answered normally, ${mib(withPages)} MiB with five endless pages (process peaks ${mib(printed(normalRun, 'peak-rss'))} and ${mib(printed(endlessRun, 'peak-rss'))} MiB)`,
		);
		expect(withPages - base).toBeLessThan(ALLOWED_GROWTH);
	});
});
