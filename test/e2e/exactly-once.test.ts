// Exactly once across executions, in a real n8n (`n8n start`, production webhooks, the packed package installed
// as a community node) against the sandbox, on every supported n8n version. See test/e2e/exactly-once.md.
// - the executions list's Retry (POST /rest/executions/:id/retry, loadWorkflow false and true) of an execution
//   stopped at line 7 of 12 creates nothing twice, and item i of the retry names line i's invoice;
// - an item whose outcome was unknown (the connection cut after the service created it) is not sent again;
// - an HTTP 500 on line 7: the retry invoices the 11 other lines and names line 7 with its resend code; with that
//   code in Options → Resend Unknown Outcomes Of of the saved workflow, Retry with current workflow invoices
//   line 7: 12 invoices, each line once; the code left there, a later batch's HTTP 500 is not sent again (issue 35);
// - an edit of the lines expression before Retry with current workflow creates no line again, and the hint says so;
// - the original retried a second time after its first retry failed: what the first retry created is not created
//   again (the retry keys), and the error says where those lines are;
// - the same event delivered twice (in turn, or at the same moment) with an Idempotency Key: one invoice; a
//   first create the service refused is created by the re-delivery; a key that is blank after a Webhook
//   ({{ $json.eventId }}: the event is under body) fails each delivery's item on the error output, creating nothing;
// - Customer → Invoice keyed on the event: the documented recovery (re-delivery, then Retry) ends with one of each;
// - Retry after n8n restarted between the failure and the retry.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSandbox, type OneShotFault, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	nodeOutput,
	nodeRuns,
	nodesThatRan,
	packPackage,
	removeHome,
	startN8nServer,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';
import {
	executionsStartedBy,
	postWebhook,
	publishWorkflows,
	retryExecution,
	saveCredential,
	saveWorkflowNodes,
	type SavedExecution,
} from '../support/executions';
import {
	CUSTOMER,
	FAILING_LINE,
	INVOICE,
	blankKeyWorkflow,
	chainWorkflow,
	eventWorkflow,
	expectRetryCompleted,
	failedBatch,
	hintsOf,
	invoiceError,
	resendCodesOf,
	invoicesFor,
	invoicesPerLine,
	lineDescription,
	LINES,
	lineRequestText,
	linesWorkflow,
	retryBatch,
	serviceCustomer,
	type LinesSetup,
} from '../support/exactly-once';

const MINUTE = 60_000;
const PATHS = {
	lines: 'exactly-once-lines',
	event: 'exactly-once-event',
	chain: 'exactly-once-chain',
	resend: 'exactly-once-resend',
	edit: 'exactly-once-edit',
	siblings: 'exactly-once-siblings',
	blankKey: 'exactly-once-blank-key',
};

describe.each(N8N_VERSIONS)('Exactly once across executions in a real n8n %s', (version) => {
	let sandbox: Sandbox;
	let home: N8nHome;
	let server: N8nServer;
	let serverLog = '';
	let customerId = '';
	const workflowIds = {
		lines: '',
		event: '',
		chain: '',
		resend: '',
		edit: '',
		siblings: '',
		blankKey: '',
	};
	const timings: Record<string, number> = {};
	const log = (message: string) => console.log(`[exactly-once ${version}] ${message}`);

	beforeAll(async () => {
		const started = Date.now();
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		sandbox = await startSandbox();
		home = await createN8nHome(version, tarball);
		server = await startN8nServer(home);
		timings.boot = server.bootMs;
		await server.setupOwner();
		const credential = await saveCredential(server, 'Invoice Service (sandbox)', sandbox);
		const tPublish = Date.now();
		[
			workflowIds.lines,
			workflowIds.event,
			workflowIds.chain,
			workflowIds.resend,
			workflowIds.edit,
			workflowIds.siblings,
			workflowIds.blankKey,
		] = await publishWorkflows(server, [
			linesWorkflow(credential, PATHS.lines),
			eventWorkflow(credential, PATHS.event),
			chainWorkflow(credential, PATHS.chain),
			linesWorkflow(credential, PATHS.resend, 4),
			linesWorkflow(credential, PATHS.edit, 5),
			linesWorkflow(credential, PATHS.siblings, 6),
			blankKeyWorkflow(credential, PATHS.blankKey),
		]);
		timings.publish = Date.now() - tPublish;
		customerId = await serviceCustomer(sandbox, 'lines@example.com');
		timings.setup = Date.now() - started;
	}, 25 * MINUTE);

	afterAll(async () => {
		log(`timings (ms): ${JSON.stringify(timings)}`);
		await server?.stop();
		if (server) serverLog += server.output();
		const logDir = path.join(REPO_ROOT, 'test-output', 'e2e');
		fs.mkdirSync(logDir, { recursive: true });
		fs.writeFileSync(path.join(logDir, `exactly-once-n8n-${version}.log`), serverLog);
		await sandbox?.close();
		if (home) removeHome(home);
	}, 2 * MINUTE);

	const lines = (): LinesSetup => ({
		sandbox,
		workflowId: workflowIds.lines,
		path: PATHS.lines,
		customerId,
	});

	/** Posts a batch whose line 7 fails once with `fault`: the execution stops with an error. */
	async function failed(batch: string, fault: OneShotFault): Promise<SavedExecution> {
		const execution = await failedBatch(server, lines(), batch, fault);
		expect({ status: execution.status, mode: execution.mode }).toEqual({
			status: 'error',
			mode: 'webhook',
		});
		return execution;
	}

	/** Retries a failed batch and logs the invoices per line before and after. */
	async function retry(batch: string, execution: SavedExecution, loadWorkflow: boolean) {
		const started = Date.now();
		const result = await retryBatch(server, sandbox, batch, execution, loadWorkflow);
		timings[`retry ${batch}`] = Date.now() - started;
		log(
			`${batch}: invoices per line after the failure ${result.before}, after the retry ${result.after}`,
		);
		return result;
	}

	test.each([false, true])(
		'Retry (loadWorkflow %s) of an execution stopped at line 7 of 12 by a refusal: each line invoiced once, item i names line i',
		async (loadWorkflow) => {
			const batch = `retry-${loadWorkflow ? 'current' : 'original'}-${version}`;
			const execution = await failed(batch, 'refuse');
			expect(invoiceError(execution)).toMatch(/Refused/);
			expectRetryCompleted(sandbox, batch, execution, await retry(batch, execution, loadWorkflow));
		},
		5 * MINUTE,
	);

	test('Retry after an unknown outcome (line 7 created, then the connection cut): line 7 is not sent again', async () => {
		const batch = `unknown-${version}`;
		const execution = await failed(batch, 'resetAfter');
		expect(invoiceError(execution)).toMatch(/outcome unknown|may (or may not )?have/i);
		const { after, retried } = await retry(batch, execution, false);
		// The service created line 7 once (before it cut the answer); the retry fails on it again, sending nothing.
		expect(retried).toMatchObject({ status: 'error', mode: 'retry', retryOf: execution.id });
		expect(after[FAILING_LINE - 1]).toBe(1);
		for (const count of after) expect(count).toBeLessThanOrEqual(1);
		expect(invoiceError(retried)).toMatch(/outcome unknown|may (or may not )?have/i);
	});

	/** Posts a batch to a lines workflow of its own, whose line 7 fails once with `fault`: it stops with an error. */
	async function failedIn(
		which: 'resend' | 'edit' | 'siblings',
		batch: string,
		fault: OneShotFault,
	) {
		const setup = { ...lines(), workflowId: workflowIds[which], path: PATHS[which] };
		const execution = await failedBatch(server, setup, batch, fault);
		expect(execution.status).toBe('error');
		return execution;
	}

	/** Edits the saved invoice node of a workflow (the published version runs unchanged). */
	const editInvoiceNode = (
		workflowId: string,
		change: (parameters: Record<string, unknown>) => void,
	) =>
		saveWorkflowNodes(server, workflowId, (nodes) => {
			change(nodes.find((node) => node.name === INVOICE)!.parameters);
		});

	test(
		'HTTP 500 on line 7 of 12: the Retry invoices the 11 other lines and names line 7 with its resend code; that code entered, Retry with current workflow invoices line 7: each line once; left entered, it resends nothing of a later batch',
		async () => {
			const batch = `resend-${version}`;
			const execution = await failedIn('resend', batch, 'http500');
			expect(invoiceError(execution)).toMatch(/HTTP 500/);

			const first = await retryBatch(server, sandbox, batch, execution, false);
			log(`${batch}: after the failure ${first.before}, after the retry ${first.after}`);
			expect(first.retried).toMatchObject({ status: 'error', mode: 'retry' });
			expect(first.after).toEqual(
				Array.from({ length: LINES }, (_, index) => (index === FAILING_LINE - 1 ? 0 : 1)),
			);
			const description = String(nodeRuns(first.retried.run, INVOICE)[0]?.error?.description);
			const [code] = resendCodesOf(execution);
			expect(resendCodesOf(first.retried)).toEqual([code]);
			expect(description).toContain(`item ${FAILING_LINE - 1} (code ${code})`);

			await editInvoiceNode(workflowIds.resend, (parameters) => {
				parameters.options = { ...(parameters.options as object), resendUnknownOf: code };
			});
			const second = await retryBatch(server, sandbox, batch, first.retried, true);
			log(`${batch}: after Resend Unknown Outcomes Of ${code}: ${second.after}`);
			expect(second.retried).toMatchObject({ status: 'success', mode: 'retry' });
			expect(second.after).toEqual(Array.from({ length: LINES }, () => 1));
			expect(hintsOf(second.retried, INVOICE)).toContain(
				`1 item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: item ${FAILING_LINE - 1} (code ${code}).`,
			);

			// The code left in the saved workflow: a later batch's HTTP 500 on line 7 gets a code of its own, and
			// Retry with current workflow does not send it again (before: the switch left on sent it unchecked).
			const later = `${batch}-later`;
			const laterExecution = await failedIn('resend', later, 'http500');
			const [laterCode] = resendCodesOf(laterExecution);
			expect(laterCode).toMatch(/^[2-9A-Z]{8}$/);
			expect(laterCode).not.toBe(code);
			const third = await retryBatch(server, sandbox, later, laterExecution, true);
			log(
				`${later}: after the failure ${third.before}, after Retry with the code left on ${third.after}`,
			);
			expect(third.retried).toMatchObject({ status: 'error', mode: 'retry' });
			expect(third.after[FAILING_LINE - 1]).toBe(0);
			expect(resendCodesOf(third.retried)).toEqual([laterCode]);
			expect(String(nodeRuns(third.retried.run, INVOICE)[0]?.error?.description)).toContain(
				`Options → Resend Unknown Outcomes Of: ${code} named no unknown outcome of this run`,
			);
		},
		10 * MINUTE,
	);

	test(
		'HTTP 500 on line 7 of 12; Retry (fails again on line 7), then Retry of the original once more: the lines the first Retry invoiced are not invoiced again, and the error says where they are',
		async () => {
			const batch = `siblings-${version}`;
			const execution = await failedIn('siblings', batch, 'http500');
			const allButLine7 = Array.from({ length: LINES }, (_, index) =>
				index === FAILING_LINE - 1 ? 0 : 1,
			);
			const first = await retryBatch(server, sandbox, batch, execution, false);
			expect(first.retried).toMatchObject({
				status: 'error',
				mode: 'retry',
				retryOf: execution.id,
			});
			expect(first.after).toEqual(allButLine7);

			const second = await retryBatch(server, sandbox, batch, execution, false);
			log(
				`${batch}: after the first retry ${first.after}, after the original's second retry ${second.after}`,
			);
			expect(second.retried).toMatchObject({
				status: 'error',
				mode: 'retry',
				retryOf: execution.id,
			});
			expect(second.after).toEqual(allButLine7);
			// The lines the first retry invoiced: those the failed run had not reached (it runs 5 lines at once, so
			// some after line 7 may have been invoiced before it stopped: those the original's record returns).
			const byFirstRetry = first.before.flatMap((count, index) =>
				count === 0 && index !== FAILING_LINE - 1 ? [`item ${index}`] : [],
			);
			expect(byFirstRetry.length).toBeGreaterThan(0);
			const description = String(nodeRuns(second.retried.run, INVOICE)[0]?.error?.description);
			expect(description).toContain(
				`Created by another retry of this execution, not sent again: ${byFirstRetry.join(', ')}.`,
			);
		},
		8 * MINUTE,
	);

	test(
		'an edit before Retry with current workflow: the lines created before are not created again, and the hint names them',
		async () => {
			const batch = `edit-${version}`;
			const execution = await failedIn('edit', batch, 'refuse');
			const createdBefore = invoicesPerLine(sandbox, batch);
			expect(createdBefore.slice(0, 2)).toEqual([1, 1]);

			await editInvoiceNode(workflowIds.edit, (parameters) => {
				parameters.lineItemsJson =
					"={{ [{ description: $json.description + ' (edited)', price: $json.price }] }}";
			});
			const { retried } = await retryBatch(server, sandbox, batch, execution, true);
			expect(retried).toMatchObject({ status: 'success', mode: 'retry' });
			const edited = (n: number) => invoicesFor(sandbox, `${lineDescription(batch, n)} (edited)`);
			for (let n = 1; n <= LINES; n++) {
				// A line created before keeps its one invoice; the others are created once, as edited.
				const before = createdBefore[n - 1];
				expect([invoicesFor(sandbox, lineDescription(batch, n)).length, edited(n).length]).toEqual(
					before === 1 ? [1, 0] : [0, 1],
				);
			}
			expect(hintsOf(retried, INVOICE)).toContain('The request of item 0, item 1');
		},
		8 * MINUTE,
	);

	const eventBody = (eventId: string, extra: Record<string, unknown> = {}) => ({
		eventId,
		customerId,
		description: `Event ${eventId}`,
		price: 42,
		...extra,
	});
	const deliver = (eventId: string, times = 1) =>
		executionsStartedBy(
			server,
			workflowIds.event,
			() =>
				Promise.all(
					Array.from({ length: times }, () => postWebhook(server, PATHS.event, eventBody(eventId))),
				),
			times,
		);
	/** [items on "Created", items on "Already created"] of the invoice node in an execution. */
	const outputsOf = (execution: SavedExecution) =>
		[0, 1].map((output) => nodeOutput(execution.run, INVOICE, output).length);

	test('the same event delivered twice with an Idempotency Key: one invoice; the second arrives on "Already created" with its key', async () => {
		const eventId = `evt-twice-${version}`;
		const [first] = await deliver(eventId);
		const [second] = await deliver(eventId);
		const invoices = invoicesFor(sandbox, `Event ${eventId}`).length;
		log(`event delivered twice: ${invoices} invoice(s)`);
		expect(invoices).toBe(1);
		expect([first.status, second.status]).toEqual(['success', 'success']);
		expect(outputsOf(first)).toEqual([1, 0]);
		const [already] = nodeOutput(second.run, INVOICE, 1);
		expect(already).toMatchObject({
			json: { idempotencyKey: eventId, alreadyCreated: true, message: expect.any(String) },
			pairedItem: { item: 0 },
		});
		expect(nodeOutput(second.run, INVOICE, 0)).toEqual([]);
		expect(nodeOutput(second.run, 'Already created', 0)).toHaveLength(1);
	});

	test('a key that is blank after a Webhook ({{ $json.eventId }}, the event is under body): each delivery fails its item on the error output, saying so, and creates nothing', async () => {
		const eventId = `evt-blank-key-${version}`;
		const deliverTwice = () =>
			executionsStartedBy(server, workflowIds.blankKey, () =>
				postWebhook(server, PATHS.blankKey, eventBody(eventId)),
			);
		const executions = [...(await deliverTwice()), ...(await deliverTwice())];
		expect(invoicesFor(sandbox, `Event ${eventId}`)).toHaveLength(0);
		for (const execution of executions) {
			expect(execution.status).toBe('success');
			expect(nodeOutput(execution.run, INVOICE, 0)).toEqual([]);
			const refused = nodeOutput(execution.run, INVOICE, 2);
			expect(refused.map((item) => (item.json.error as { message?: string }).message)).toEqual([
				'Item 0: Idempotency Key is blank: the expression {{ $json.eventId }} gave nothing',
			]);
			expect(nodeOutput(execution.run, 'Key refused', 0)).toHaveLength(1);
		}
	});

	test('a first create the service refused is created by the re-delivery: one invoice, never none', async () => {
		const eventId = `evt-refused-${version}`;
		sandbox.faultOnce({ bodyContains: lineRequestText(`Event ${eventId}`), fault: 'refuse' });
		const [first] = await deliver(eventId);
		expect(first.status).toBe('error');
		expect(invoicesFor(sandbox, `Event ${eventId}`)).toHaveLength(0);
		const [second] = await deliver(eventId);
		expect(second.status).toBe('success');
		expect(outputsOf(second)).toEqual([1, 0]);
		expect(invoicesFor(sandbox, `Event ${eventId}`)).toHaveLength(1);
	});

	test('the same event twice at the same moment (one n8n): one invoice', async () => {
		const eventId = `evt-concurrent-${version}`;
		// A slower service keeps both executions busy at once.
		sandbox.configure({ latencyMs: 300 });
		let executions: SavedExecution[];
		try {
			executions = await deliver(eventId, 2);
		} finally {
			sandbox.configure({ latencyMs: 0 });
		}
		const invoices = invoicesFor(sandbox, `Event ${eventId}`).length;
		// What each execution did, should the check below fail: [id, status, items per output, the nodes that ran].
		const seen = executions.map((e) => [e.id, e.status, outputsOf(e), nodesThatRan(e.run)]);
		log(`event delivered twice at once: ${invoices} invoice(s); ${JSON.stringify(seen)}`);
		expect(invoices).toBe(1);
		expect(executions.map((execution) => execution.status)).toEqual(['success', 'success']);
		// One execution created it, the other found its key taken.
		expect(executions.map(outputsOf).sort()).toEqual([
			[0, 1],
			[1, 0],
		]);
	});

	test('Customer → Invoice keyed on the event, invoice refused once: re-delivery, then Retry of the failed execution, ends with one customer and one invoice', async () => {
		const eventId = `evt-chain-${version}`;
		const email = `chain.${version}@example.com`;
		const description = `Chain ${eventId}`;
		const body = { eventId, email, description, price: 99 };
		const deliverChain = () =>
			executionsStartedBy(server, workflowIds.chain, () => postWebhook(server, PATHS.chain, body));
		sandbox.faultOnce({ bodyContains: lineRequestText(description), fault: 'refuse' });
		const [failed] = await deliverChain();
		expect(failed.status).toBe('error');
		expect(nodeOutput(failed.run, CUSTOMER, 0)).toHaveLength(1);

		// The event comes again: the customer is not created twice (no 409) and no invoice is made from here.
		const [redelivered] = await deliverChain();
		expect(redelivered.status).toBe('success');
		expect(nodeOutput(redelivered.run, CUSTOMER, 1)).toEqual([
			expect.objectContaining({ json: expect.objectContaining({ idempotencyKey: eventId }) }),
		]);
		expect(nodeOutput(redelivered.run, INVOICE, 0)).toEqual([]);

		// The recovery: Retry of the failed execution creates the invoice, for the customer made the first time.
		const retried = await retryExecution(server, failed.id, false);
		const stats = sandbox.stats();
		const invoices = invoicesFor(sandbox, description);
		log(`chain: ${stats.customersByEmail[email]} customer(s), ${invoices.length} invoice(s)`);
		expect(retried.status).toBe('success');
		expect(stats.customersByEmail[email]).toBe(1);
		expect(invoices).toEqual([
			expect.objectContaining({ customerId: nodeOutput(failed.run, CUSTOMER, 0)[0].json.id }),
		]);
	});

	test(
		'Retry after n8n restarted between the failure and the retry: each line invoiced once',
		async () => {
			const batch = `restart-${version}`;
			const execution = await failed(batch, 'refuse');
			const started = Date.now();
			await server.stop();
			serverLog += server.output();
			server = await startN8nServer(home);
			await server.login();
			timings.restart = Date.now() - started;
			expectRetryCompleted(sandbox, batch, execution, await retry(batch, execution, false));
		},
		5 * MINUTE,
	);
});
