// Issue 9 in a real n8n (both supported majors), the packed package installed as a community node:
// - downstream of the error output, `$('<node before>').item` and `$('Invoice Service').item` resolve to the
//   failing item's own input and error, with several items of which only some fail;
// - waits are visible: n8n's own log of a run against a rate-limited sandbox names each wait (item, HTTP status,
//   how long) and ends with a one-line summary, and never shows the key;
// - Timeout is a total deadline in the real request helpers (a trickled create is cut, its socket closed).
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	nodeOutput,
	packPackage,
	removeHome,
	runWorkflows,
	type N8nHome,
	type RunWorkflowsResult,
	type WorkflowResult,
} from '../../tools/n8n';
import { AFTER_ERROR, SERVICE, customerWorkflow, person } from '../support/customer-workflow';

const MINUTE = 60_000;

describe.each(N8N_VERSIONS)('transport behaviour in a real n8n %s', (version) => {
	let home: N8nHome;
	let plain: Sandbox;
	let limited: Sandbox;
	let trickling: Sandbox;
	let batch: RunWorkflowsResult;
	const result = (id: string): WorkflowResult => batch.results[id];

	const DOWNSTREAM = [
		person('first@example.com'),
		person('not-an-email'),
		person('second@example.com'),
		person('first@example.com'), // already exists by then: 409
		person('third@example.com'),
	];

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		plain = await startSandbox();
		limited = await startSandbox({ rateLimit: { perSecond: 2, burst: 1 } });
		trickling = await startSandbox({ faults: { trickle: 1 }, trickleMs: 60_000 });
		home = await createN8nHome(version, tarball);
		const credential = (id: string, sandbox: Sandbox) => ({
			id,
			name: id,
			type: CREDENTIAL_TYPE,
			data: { baseUrl: sandbox.rootUrl, apiKey: sandbox.apiKey, allowHttp: true },
		});
		batch = await runWorkflows(home, {
			credentials: [
				credential('credPlainT000001', plain),
				credential('credLimitT000001', limited),
				credential('credTrickT000001', trickling),
			],
			workflows: [
				customerWorkflow('wfDownstream0001', 'credPlainT000001', DOWNSTREAM, { concurrency: 1 }),
				customerWorkflow(
					'wfRateLimited001',
					'credLimitT000001',
					[1, 2, 3, 4].map((i) => person(`limited${i}@example.com`)),
					{ concurrency: 2 },
				),
				customerWorkflow('wfTrickle0000001', 'credTrickT000001', [person('slow@example.com')], {
					timeout: 3000,
				}),
			],
		});
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all([plain?.close(), limited?.close(), trickling?.close()]);
		if (home) removeHome(home);
	});

	test('after the error output, $(node before).item and $(Invoice Service).item are the failing item’s own', () => {
		const run = result('wfDownstream0001').run;
		const created = nodeOutput(run, SERVICE, 0);
		expect(created.map((item) => item.json.email)).toEqual([
			'first@example.com',
			'second@example.com',
			'third@example.com',
		]);
		const failed = nodeOutput(run, SERVICE, 1);
		expect(failed.map((item) => item.pairedItem)).toEqual([{ item: 1 }, { item: 3 }]);

		const after = nodeOutput(run, AFTER_ERROR, 0).map((item) => item.json);
		expect(after).toHaveLength(2);
		expect(after[0].inputEmail).toBe('not-an-email');
		expect(after[0].serviceError).toMatch(/^Item 1: Email must be an e-mail address/);
		expect(after[1].inputEmail).toBe('first@example.com');
		expect(after[1].serviceError).toBe(
			'A customer with the e-mail first@example.com already exists',
		);
	});

	test('each rate-limit wait and a run summary appear in n8n’s log, never the key', () => {
		const r = result('wfRateLimited001');
		expect(nodeOutput(r.run, SERVICE, 0)).toHaveLength(4);
		const log = `${r.stdout}\n${r.stderr}`;
		const waits = log
			.split('\n')
			.filter((line) =>
				/Invoice Service "Invoice Service", item \d+, create-customer: HTTP 429;/.test(line),
			);
		expect(waits.length).toBeGreaterThan(0);
		for (const line of waits) expect(line).toMatch(/ for \d+(\.\d)? s/);
		expect(log).toMatch(
			/Invoice Service "Invoice Service": 4 item\(s\) sent, [1-4] retried \(\d+ retries\), \d+(\.\d)? s waited in total/,
		);
		expect(limited.stats().faults.rateLimited).toBeGreaterThan(0);
		expect(log).not.toContain(limited.apiKey);
	});

	test('a trickled create is cut at Timeout by the real request helper, and never sent again', () => {
		const r = result('wfTrickle0000001');
		const [failed] = nodeOutput(r.run, SERVICE, 1);
		expect((failed.json.error as { message: string }).message).toMatch(
			/^No answer from create-customer within the time-out: outcome unknown$/,
		);
		const stats = trickling.stats();
		expect(stats.requests.total).toBe(1);
		expect(stats.faults.trickle).toBe(1);
		expect(stats.abortedResponses).toBe(1);
		expect(stats.openConnections).toBe(0);
		// n8n's whole boot is in r.ms; the trickle alone would take 60 s.
		expect(r.ms).toBeLessThan(55_000);
	});
});
