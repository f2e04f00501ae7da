// n8n's own node settings in a real n8n (both supported majors), the packed package installed as a community
// node, against the sandbox:
// - Retry On Fail under Stop Workflow: a run stopped by a refusal is run again by n8n; what the earlier tries
//   created is returned, not sent again (the sandbox sees each customer once, and no 409);
// - Retry On Fail under Continue (using error output): a first item refused before sending makes n8n run the
//   node Max Tries times; every good item is still created once;
// - a key revoked mid-run (the sandbox's revokeKeysAfter fault): nothing is sent after the 401, every other
//   item is an error item saying it was not sent;
// - Execute Once (with Retry On Fail): the first item only, once, paired to it.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	invoiceServiceCredential,
	nodeOutput,
	nodeRuns,
	packPackage,
	removeHome,
	runWorkflows,
	type N8nHome,
	type RunWorkflowsResult,
} from '../../tools/n8n';
import { SERVICE, customerWorkflow, person } from '../support/customer-workflow';

const MINUTE = 60_000;
const people = (prefix: string, count: number) =>
	Array.from({ length: count }, (_, index) => person(`${prefix}${index}@example.com`));
/** The execution hints shown under the Invoice Service node's output. */
const hintsOf = (result: RunWorkflowsResult['results'][string]) =>
	(nodeRuns(result.run, SERVICE)[0]?.hints ?? []).map((hint) => hint.message).join('\n');
const messageOf = (item: { json: Record<string, unknown> }) =>
	String((item.json.error as { message?: string }).message);

describe.each(N8N_VERSIONS)("n8n's node settings in a real n8n %s", (version) => {
	let home: N8nHome;
	let limited: Sandbox;
	let plain: Sandbox;
	let revoking: Sandbox;
	let once: Sandbox;
	let batch: RunWorkflowsResult;

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		// 5 creates at once, then 2 a second: the first try stops at the 6th item (no retry wait allowed).
		limited = await startSandbox({ rateLimit: { perSecond: 2, burst: 5 } });
		plain = await startSandbox();
		revoking = await startSandbox({ revokeKeysAfter: 3 });
		once = await startSandbox();
		home = await createN8nHome(version, tarball);
		batch = await runWorkflows(home, {
			credentials: [
				invoiceServiceCredential({ id: 'credLimitR000001', name: 'limited' }, limited),
				invoiceServiceCredential({ id: 'credPlainR000001', name: 'plain' }, plain),
				invoiceServiceCredential({ id: 'credRevokR000001', name: 'revoking' }, revoking),
				invoiceServiceCredential({ id: 'credOnceR0000001', name: 'once' }, once),
			],
			workflows: [
				customerWorkflow(
					'wfRetryStop00001',
					'credLimitR000001',
					people('stop', 8),
					{ concurrency: 1, maxRetryWait: 0 },
					{ onError: 'stopWorkflow', retryOnFail: true, maxTries: 5, waitBetweenTries: 1000 },
				),
				customerWorkflow(
					'wfRetryErrOut001',
					'credPlainR000001',
					[person('not-an-email'), ...people('errout', 5)],
					{ concurrency: 2 },
					{ onError: 'continueErrorOutput', retryOnFail: true, maxTries: 3, waitBetweenTries: 10 },
				),
				customerWorkflow('wfKeyRevoked0001', 'credRevokR000001', people('revoked', 8), {
					concurrency: 1,
				}),
				customerWorkflow(
					'wfExecuteOnce001',
					'credOnceR0000001',
					people('once', 3),
					{},
					{ onError: 'continueErrorOutput', executeOnce: true, retryOnFail: true, maxTries: 2 },
				),
			],
		});
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all([limited?.close(), plain?.close(), revoking?.close(), once?.close()]);
		if (home) removeHome(home);
	});

	test('Retry On Fail, Stop Workflow: n8n runs the stopped node again, and nothing is created twice', () => {
		const result = batch.results.wfRetryStop00001;
		expect(result.code).toBe(0);
		const created = nodeOutput(result.run, SERVICE, 0);
		expect(created.map((item) => item.json.email)).toEqual(people('stop', 8).map((p) => p.email));
		expect(created.map((item) => item.pairedItem)).toEqual(
			people('stop', 8).map((_, item) => ({ item })),
		);
		const stats = limited.stats();
		// n8n retried (some requests were refused), and each customer reached the service exactly once besides.
		expect(stats.faults.rateLimited).toBeGreaterThan(0);
		expect(stats.requests.total).toBe(8 + stats.faults.rateLimited);
		expect(limited.records().customers).toHaveLength(8);
		expect(stats.requests.byStatus['409']).toBeUndefined();
		expect(hintsOf(result)).toMatch(
			/\d+ item\(s\) were created in an earlier try of this node \(Retry On Fail or Retry of the failed execution\)/,
		);
	});

	test('Retry On Fail, Continue (using error output): a refused first item does not create the others again', () => {
		const result = batch.results.wfRetryErrOut001;
		expect(result.code).toBe(0);
		const created = nodeOutput(result.run, SERVICE, 0);
		expect(created.map((item) => item.json.email)).toEqual(people('errout', 5).map((p) => p.email));
		const failed = nodeOutput(result.run, SERVICE, 1);
		expect(failed).toHaveLength(1);
		expect(failed[0].pairedItem).toEqual({ item: 0 });
		expect(messageOf(failed[0])).toMatch(/^Item 0: Email must be an e-mail address/);
		// n8n ran the node 3 times (its first item stayed an error item); the service saw each good item once.
		expect(plain.stats().requests.total).toBe(5);
		expect(plain.records().customers).toHaveLength(5);
	});

	test('a key revoked mid-run: nothing is sent after the 401, the rest are error items saying why', () => {
		const result = batch.results.wfKeyRevoked0001;
		expect(result.code).toBe(0);
		expect(nodeOutput(result.run, SERVICE, 0)).toHaveLength(3);
		const failed = nodeOutput(result.run, SERVICE, 1);
		expect(failed.map((item) => item.pairedItem)).toEqual(
			[3, 4, 5, 6, 7].map((item) => ({ item })),
		);
		expect(messageOf(failed[0])).toMatch(/^The API key was rejected \(HTTP 401\)/);
		for (const item of failed.slice(1)) {
			expect(messageOf(item)).toMatch(
				/^Not sent: the service refused the API key earlier in this run/,
			);
		}
		expect(revoking.stats().requests.total).toBe(4);
		expect(hintsOf(result)).toMatch(
			/4 item\(s\) were not sent: the service refused the API key earlier in this run \(HTTP 401\)/,
		);
		expect(`${result.stdout}\n${result.stderr}`).not.toContain(revoking.apiKey);
	});

	test('Execute Once: only the first item is sent, once, and its output is paired to it', () => {
		const result = batch.results.wfExecuteOnce001;
		expect(result.code).toBe(0);
		const created = nodeOutput(result.run, SERVICE, 0);
		expect(created.map((item) => [item.json.email, item.pairedItem])).toEqual([
			['once0@example.com', { item: 0 }],
		]);
		expect(once.stats().requests.total).toBe(1);
	});
});
