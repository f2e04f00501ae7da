// Queue mode as n8n documents its deployment: PostgreSQL and Redis (Debian's, each on a free loopback port,
// started by test/support), an n8n main (`n8n start`, EXECUTIONS_MODE=queue) that receives the production
// webhook and enqueues the execution, and two `n8n worker` processes that run them. Each process has its own
// user folder, as on its own machine: they share only the database, Redis and the encryption key (and each has
// the community package installed). The workflow creates a customer and an invoice with its PDF. A third one
// (test/support/exactly-once.ts) fails at one line of 12, and the executions list's Retry creates nothing twice.
// A fourth (Webhook → Invoice → Create keyed on the event id) shows the Idempotency Key holding across the two
// workers: 40 events each posted twice at the same instant make 40 invoices, one Created and one Already Created
// each (the rest of the keys across workers: keys-across-workers.test.ts).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { sleep } from 'n8n-workflow';
import { PDFDocument } from 'pdf-lib';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	NODE24,
	NODE_TYPE,
	READY_LIMIT_MS,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	importAndPublish,
	invoiceServiceCredential,
	n8nBin,
	n8nEnv,
	nodeOutput,
	nodeRuns,
	packPackage,
	removeHome,
	startN8nServer,
	startProcess,
	waitForWebhook,
	type N8nHome,
	type N8nServer,
	type ProcessHandle,
} from '../../tools/n8n';
import {
	FAILING_LINE,
	INVOICE,
	LINES,
	eventWorkflow,
	expectRetryCompleted,
	failedBatch,
	hintsOf,
	invoicesFor,
	linesWorkflow,
	resendCodesOf,
	retryBatch,
	serviceCustomer,
	type LinesSetup,
} from '../support/exactly-once';
import {
	executionsStartedBy,
	postWebhook as postTo,
	publishWorkflows,
	saveCredential,
	saveWorkflowNodes,
	type SavedExecution,
} from '../support/executions';
import { postgresBinDir, startPostgres, type Postgres } from '../support/postgres';
import { redisCommand, redisServerBin, startRedis, type RedisServer } from '../support/redis';

const MINUTE = 60_000;
const WORKERS = 2;
const WORKER_CONCURRENCY = 5;
/** Webhook events fired at once: four times what one worker takes at a time, so both must take some. */
const BURST = 20;
const CREDENTIAL = { id: 'credQueueSandbox', name: 'Invoice Service (sandbox)' };
const WEBHOOK_PATH = 'new-customer';
/** The same flow, answering with the PDF itself (made on a worker, kept in n8n's binary data store). */
const PDF_WEBHOOK_PATH = 'new-customer-pdf';
/** The exactly-once batch of 12 invoice lines (test/support/exactly-once.ts). */
const LINES_PATH = 'exactly-once-lines';
/** The same batch, for the original execution retried twice. */
const SIBLINGS_PATH = 'exactly-once-siblings';
/** The same batch, for line 7's resend code entered (Resend Unknown Outcomes Of) before a Retry with the current workflow. */
const RESEND_PATH = 'exactly-once-resend';
/** Webhook → Invoice → Create keyed on the event (test/support/exactly-once.ts): the Idempotency Key tests. */
const EVENT_PATH = 'keyed-event';
/** Events of the same-instant test, each posted twice at once. */
const EVENT_PAIRS = 40;

// ---------------------------------------------------------------------------------------------------------
// The workflow

const JSON_RESPONSE = {
	respondWith: 'json',
	responseBody:
		"={{ JSON.stringify({ executionId: $execution.id, customerId: $('Create customer').item.json.id, invoiceId: $json.invoice_id, status: $json.status, downloadUrl: $json.download_url, pdf: { fileName: $binary.data.fileName, mimeType: $binary.data.mimeType, fileSize: $binary.data.fileSize } }) }}",
	options: {},
};
const PDF_RESPONSE = {
	respondWith: 'binary',
	responseDataSource: 'set',
	inputFieldName: 'data',
	options: {
		responseHeaders: {
			entries: [
				{ name: 'X-Invoice-Id', value: '={{ $json.invoice_id }}' },
				{ name: 'X-Execution-Id', value: '={{ $execution.id }}' },
			],
		},
	},
};

/** Webhook (POST /webhook/<path>) -> Create customer -> Create invoice (downloadPdf) -> Respond to Webhook. */
function queueWorkflow(opts: {
	id: string;
	/** 1..9: makes the node ids of each workflow unique. */
	tag: number;
	path: string;
	respond: Record<string, unknown>;
}): Record<string, unknown> {
	const cred = { [CREDENTIAL_TYPE]: CREDENTIAL };
	const uuid = (n: number) => `1a1a1a1a-000${opts.tag}-4000-8000-00000000000${n}`;
	return {
		id: opts.id,
		name: `Webhook ${opts.path}: new customer with invoice and PDF`,
		nodes: [
			{
				parameters: {
					httpMethod: 'POST',
					path: opts.path,
					responseMode: 'responseNode',
					options: {},
				},
				id: uuid(1),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: uuid(5),
			},
			{
				parameters: {
					resource: 'customer',
					operation: 'create',
					firstName: '={{ $json.body.firstName }}',
					lastName: '={{ $json.body.lastName }}',
					email: '={{ $json.body.email }}',
					additionalFields: { companyName: '={{ $json.body.company }}' },
				},
				id: uuid(2),
				name: 'Create customer',
				type: NODE_TYPE,
				typeVersion: 1,
				position: [220, 0],
				credentials: cred,
			},
			{
				parameters: {
					resource: 'invoice',
					operation: 'create',
					customerId: '={{ $json.id }}',
					currency: "={{ $('Webhook').item.json.body.currency }}",
					lineItemsMode: 'json',
					lineItemsJson: "={{ $('Webhook').item.json.body.lines }}",
					amountMode: 'sum',
					options: { downloadPdf: true },
				},
				id: uuid(3),
				name: 'Create invoice',
				type: NODE_TYPE,
				typeVersion: 1,
				position: [440, 0],
				credentials: cred,
			},
			{
				parameters: opts.respond,
				id: uuid(4),
				name: 'Respond to Webhook',
				type: 'n8n-nodes-base.respondToWebhook',
				typeVersion: 1.1,
				position: [660, 0],
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Create customer', type: 'main', index: 0 }]] },
			'Create customer': { main: [[{ node: 'Create invoice', type: 'main', index: 0 }]] },
			'Create invoice': { main: [[{ node: 'Respond to Webhook', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

interface WebhookAnswer {
	executionId: string;
	customerId: string;
	invoiceId: string;
	status: string;
	downloadUrl: string;
	pdf: { fileName: string; mimeType: string; fileSize: string };
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Where binary data (the invoice PDF) lives: in the database that main and workers share. n8n does not support
 * filesystem binary data in queue mode (a file written on a worker's disk is not on the main's). 2.x stores
 * binary data in the database by default in queue mode (said out loud here); 1.123 has the same `database`
 * mode, but only when it is listed in N8N_AVAILABLE_BINARY_DATA_MODES (default `filesystem`): without that,
 * mode `database` quietly falls back to keeping the file base64 in the execution data.
 */
function binaryDataEnv(major: number): NodeJS.ProcessEnv {
	return major >= 2
		? { N8N_DEFAULT_BINARY_DATA_MODE: 'database' }
		: {
				N8N_AVAILABLE_BINARY_DATA_MODES: 'filesystem,database',
				N8N_DEFAULT_BINARY_DATA_MODE: 'database',
			};
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

describe.each(N8N_VERSIONS)(
	'Invoice Service in n8n %s queue mode as deployed (PostgreSQL, Redis, main + 2 workers)',
	(VERSION) => {
		const major = Number(VERSION.split('.')[0]);
		const homes: N8nHome[] = [];
		let sandbox: Sandbox | undefined;
		let redis: RedisServer | undefined;
		let pg: Postgres | undefined;
		let main: N8nServer | undefined;
		const workers: ProcessHandle[] = [];
		let queueEnv: NodeJS.ProcessEnv = {};
		const timings: Record<string, number> = {};

		const postWebhook = async (body: Record<string, unknown>, webhookPath = WEBHOOK_PATH) => {
			const res = await fetch(`${main!.url}/webhook/${webhookPath}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
				signal: AbortSignal.timeout(120_000),
			});
			const bytes = Buffer.from(await res.arrayBuffer());
			const text = bytes.toString('utf8');
			let json: unknown;
			try {
				json = JSON.parse(text);
			} catch {
				json = undefined;
			}
			return { status: res.status, headers: res.headers, bytes, text, json: json as WebhookAnswer };
		};

		/** Which workers (1-based) logged that they started this execution. */
		const workersThatRan = (executionId: string) =>
			workers
				.map((w, i) =>
					new RegExp(`Worker started execution ${executionId} \\(job \\d+\\)`).test(w.output())
						? i + 1
						: 0,
				)
				.filter(Boolean);
		const finishedRuns = () =>
			workers.reduce(
				(n, w) => n + (w.output().match(/Worker finished execution \d+ /g)?.length ?? 0),
				0,
			);
		/** Waits until some worker logged that it finished this execution. */
		const waitUntilFinished = async (executionId: string, timeoutMs = 60_000) => {
			const re = new RegExp(`Worker finished execution ${executionId} `);
			for (const deadline = Date.now() + timeoutMs; ; await sleep(200)) {
				if (workers.some((w) => re.test(w.output()))) return;
				if (Date.now() > deadline)
					throw new Error(`no worker finished execution ${executionId} in ${timeoutMs} ms`);
			}
		};

		/** The owner and the credential, made once through the main's REST API by whichever test needs them first. */
		let restCredential: Promise<Awaited<ReturnType<typeof saveCredential>>> | undefined;
		const credentialOnce = () =>
			(restCredential ??= main!
				.setupOwner()
				.then(async () => await saveCredential(main!, 'Invoice Service (sandbox)', sandbox!)));

		beforeAll(async () => {
			const t0 = Date.now();
			// On a fresh machine these install Debian's packages first.
			const redisBin = redisServerBin();
			postgresBinDir();
			await ensureN8nInstalled([VERSION]);
			const tarball = await packPackage();

			// An empty database per run, Redis without persistence, the service.
			const tServices = Date.now();
			// Settled one by one, so that afterAll stops whichever started when another one failed.
			const started = await Promise.allSettled([
				startSandbox().then((s) => (sandbox = s)),
				startRedis(redisBin).then((r) => (redis = r)),
				startPostgres().then((p) => (pg = p)),
			]);
			for (const r of started) if (r.status === 'rejected') throw r.reason;
			if (!redis || !pg || !sandbox) throw new Error('unreachable: all three started');
			expect(await redisCommand(redis.port, 'PING')).toBe('+PONG');
			timings.redisPostgresSandbox = Date.now() - tServices;

			// One user folder per process (main, worker 1, worker 2), each with the package installed.
			const tHomes = Date.now();
			homes.push(
				...(await Promise.all(
					Array.from({ length: 1 + WORKERS }, () => createN8nHome(VERSION, tarball)),
				)),
			);
			timings.userFolders = Date.now() - tHomes;
			queueEnv = {
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: '127.0.0.1',
				QUEUE_BULL_REDIS_PORT: String(redis.port),
				...pg.env,
				...binaryDataEnv(major),
			};
			// Imported into PostgreSQL (the first command creates n8n's tables there).
			Object.assign(
				timings,
				await importAndPublish(homes[0], {
					credentials: [invoiceServiceCredential(CREDENTIAL, sandbox)],
					workflows: [
						queueWorkflow({
							id: 'queueNewCust',
							tag: 1,
							path: WEBHOOK_PATH,
							respond: JSON_RESPONSE,
						}),
						queueWorkflow({
							id: 'queueNewCustPdf',
							tag: 2,
							path: PDF_WEBHOOK_PATH,
							respond: PDF_RESPONSE,
						}),
					],
					env: queueEnv,
				}),
			);

			// Main and workers boot side by side, as a deployment starts them.
			const tBoot = Date.now();
			for (const home of homes.slice(1)) {
				workers.push(
					startProcess(
						'bash',
						[NODE24, n8nBin(VERSION), 'worker', `--concurrency=${WORKER_CONCURRENCY}`],
						{ cwd: home.userFolder, env: n8nEnv(home, queueEnv) },
					),
				);
			}
			await Promise.all([
				// The main takes every webhook: a pool of 10 database connections, as keys-deployment.ts gives its
				// main (n8n 1.123's main answered "Database is not ready!" with n8n's 2 after a burst, on a busy machine).
				startN8nServer(homes[0], { env: { ...queueEnv, DB_POSTGRESDB_POOL_SIZE: '10' } }).then(
					(m) => {
						main = m;
						timings.mainBoot = Date.now() - tBoot;
					},
				),
				...workers.map((w, i) =>
					w
						.waitFor(/n8n worker is now ready[\s\S]* \* Concurrency: \d+/, READY_LIMIT_MS)
						.then(() => {
							timings[`worker${i + 1}Boot`] = Date.now() - tBoot;
						}),
				),
			]);
			timings.webhookRegistered = await waitForWebhook(
				`${main!.url}/webhook/${WEBHOOK_PATH}`,
				'POST',
			);
			await waitForWebhook(`${main!.url}/webhook/${PDF_WEBHOOK_PATH}`, 'POST');
			timings.setup = Date.now() - t0;
		}, 20 * MINUTE);

		afterAll(async () => {
			console.log(`[queue e2e ${VERSION}] timings (ms): ${JSON.stringify(timings)}`);
			await Promise.allSettled([...workers.map((w) => w.stop()), main?.stop()]);
			await Promise.allSettled([redis?.server.stop(), pg?.close()]);
			// Keep the logs of the last run for a look after a failure (test-output/ is git-ignored).
			const logDir = path.join(REPO_ROOT, 'test-output', 'e2e-scale');
			fs.mkdirSync(logDir, { recursive: true });
			const log = (name: string, text: string) =>
				fs.writeFileSync(path.join(logDir, `${name}-${VERSION}.log`), text);
			if (main) log('n8n-main', main.output());
			for (const [i, w] of workers.entries()) log(`n8n-worker-${i + 1}`, w.output());
			if (redis) log('redis', redis.server.output());
			if (pg) log('postgres', pg.output());
			await sandbox?.close();
			for (const home of homes) removeHome(home);
			if (redis) fs.rmSync(redis.dir, { recursive: true, force: true });
		}, 3 * MINUTE);

		test('main and both workers run in queue mode on PostgreSQL and Redis, each with its own user folder', async () => {
			for (const out of [main!.output(), ...workers.map((w) => w.output())]) {
				// n8n prints this when queue mode runs on SQLite: here nobody does.
				expect(out).not.toMatch(/Scaling mode is not officially supported with sqlite/);
			}
			for (const w of workers)
				expect(w.output()).toMatch(new RegExp(` \\* Concurrency: ${WORKER_CONCURRENCY}`));
			// No SQLite file anywhere: n8n's tables and the published workflows are in PostgreSQL.
			for (const home of homes)
				expect(fs.existsSync(path.join(home.n8nDir, 'database.sqlite'))).toBe(false);
			expect(await pg!.query('SELECT id FROM workflow_entity WHERE active ORDER BY id')).toBe(
				'queueNewCust\nqueueNewCustPdf',
			);
			expect(await pg!.query('SELECT count(*) FROM execution_entity')).toBe('0');
			// n8n's Bull queue "jobs" lives in our Redis. Bull writes its first keys a moment after the workers
			// report ready (seen once in CI: none yet), so give it up to 15 s before judging.
			let keys = '';
			for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(250)) {
				keys = await redisCommand(redis!.port, 'KEYS', 'bull:jobs:*');
				if (/bull:jobs:/.test(keys)) break;
			}
			expect(keys).toMatch(/bull:jobs:/);
		});

		test('POST /webhook/new-customer: a worker creates the customer and the invoice with its PDF', async () => {
			const t = Date.now();
			const r = await postWebhook({
				firstName: 'Mary',
				lastName: 'Jackson',
				email: 'mary.jackson@example.com',
				company: 'Langley Research',
				currency: 'EUR',
				lines: [
					{ description: 'Wind tunnel hours', price: 250.4 },
					{ description: 'Report', price: 49.6 },
				],
			});
			timings.webhook = Date.now() - t;
			expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });
			const answer = r.json;
			expect(answer).toMatchObject({
				executionId: expect.stringMatching(/^\d+$/),
				customerId: expect.stringMatching(/^cust_\d+$/),
				invoiceId: expect.stringMatching(/^inv_\d+$/),
				status: 'sent',
				pdf: { fileName: expect.stringMatching(/^inv_\d+\.pdf$/), mimeType: 'application/pdf' },
			});
			expect(answer.pdf.fileName).toBe(`${answer.invoiceId}.pdf`);

			// The service saw exactly this customer and this invoice, and the PDF was fetched.
			const { customers, invoices } = sandbox!.records();
			expect(customers).toEqual([
				expect.objectContaining({ id: answer.customerId, email: 'mary.jackson@example.com' }),
			]);
			expect(invoices).toEqual([
				expect.objectContaining({
					id: answer.invoiceId,
					customerId: answer.customerId,
					amount: 300,
					currency: 'EUR',
				}),
			]);
			expect(sandbox!.stats().pdf.downloads).toBeGreaterThanOrEqual(1);

			// Enqueued by the main instance, run by exactly one worker.
			const id = answer.executionId;
			await waitUntilFinished(id);
			expect(main!.output()).toMatch(new RegExp(`Enqueued execution ${id} \\(job \\d+\\)`));
			expect(workersThatRan(id)).toHaveLength(1);
		});

		test(
			`${BURST} webhook events at once: every customer and invoice created exactly once, both workers run executions`,
			async () => {
				// A little service latency (as a real one has) keeps each run busy long enough for the burst to
				// outlast one worker's ${WORKER_CONCURRENCY} slots.
				sandbox!.configure({ latencyMs: 150 });
				const before = sandbox!.stats();
				const emails = Array.from({ length: BURST }, (_, i) => `burst.${i}@example.com`);
				const t = Date.now();
				const answers = await Promise.all(
					emails.map((email, i) =>
						postWebhook({
							firstName: `B${i}`,
							lastName: 'Burst',
							email,
							company: '',
							currency: 'GBP',
							lines: [{ description: `Line ${i}`, price: 10 + i }],
						}),
					),
				);
				timings.burst = Date.now() - t;
				sandbox!.configure({ latencyMs: 0 });
				for (const r of answers)
					expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });

				// Exactly once, per event: one customer per e-mail, one invoice per customer, right amounts.
				const stats = sandbox!.stats();
				expect(stats.customers - before.customers).toBe(BURST);
				expect(stats.invoices - before.invoices).toBe(BURST);
				const { invoices } = sandbox!.records();
				for (const [i, r] of answers.entries()) {
					expect(stats.customersByEmail[emails[i]]).toBe(1);
					expect(stats.invoicesByCustomer[r.json.customerId]).toBe(1);
					expect(invoices).toContainEqual(
						expect.objectContaining({
							id: r.json.invoiceId,
							customerId: r.json.customerId,
							amount: 10 + i,
						}),
					);
				}

				// Each execution ran on exactly one worker, and both workers ran some.
				const ids = answers.map((r) => r.json.executionId);
				expect(new Set(ids).size).toBe(BURST);
				for (const id of ids) await waitUntilFinished(id);
				const perWorker = Array.from({ length: WORKERS }, () => 0);
				for (const id of ids) {
					const ran = workersThatRan(id);
					expect({ id, ran }).toEqual({ id, ran: [expect.any(Number)] });
					perWorker[ran[0] - 1]++;
				}
				console.log(`[queue e2e ${VERSION}] burst of ${BURST}: runs per worker ${perWorker}`);
				for (const n of perWorker) expect(n).toBeGreaterThanOrEqual(1);

				// n8n recorded each as a successful webhook execution in PostgreSQL.
				expect(
					await pg!.query(
						`SELECT mode, status, count(*) FROM execution_entity WHERE id IN (${ids.join(',')}) GROUP BY mode, status`,
					),
				).toBe(`webhook|success|${BURST}`);
			},
			5 * MINUTE,
		);

		test('a failing run (duplicate e-mail) fails on a worker and the webhook caller gets an error, not a hang', async () => {
			// The customer this test then tries to create a second time: made here, so the test runs alone too.
			const event = {
				firstName: 'Katherine',
				lastName: 'Johnson',
				email: 'katherine.johnson@example.com',
				company: '',
				currency: 'EUR',
				lines: [{ description: 'x', price: 1 }],
			};
			const first = await postWebhook(event);
			expect({ status: first.status, text: first.text }).toMatchObject({ status: 200 });
			await waitUntilFinished(first.json.executionId);
			const before = sandbox!.records().invoices.length;
			const rejectionsBefore = sandbox!.stats().duplicateEmailRejections;
			const runsBefore = finishedRuns();
			const r = await postWebhook(event);
			// responseNode mode: n8n answers 500 {"message":"Workflow execution failed"} when the run fails.
			expect({ status: r.status, text: r.text }).toEqual({
				status: 500,
				text: expect.stringContaining('Workflow execution failed'),
			});
			expect(sandbox!.records().invoices).toHaveLength(before);
			// The service refused the duplicate (409), and a worker finished the failed run.
			expect(sandbox!.stats().duplicateEmailRejections).toBe(rejectionsBefore + 1);
			for (const deadline = Date.now() + 30_000; finishedRuns() < runsBefore + 1; await sleep(200))
				if (Date.now() > deadline) throw new Error('no worker finished the failed run');
		});

		test('the PDF made on a worker comes back through the main instance as the webhook answer, via the database', async () => {
			const t = Date.now();
			const r = await postWebhook(
				{
					firstName: 'Dorothy',
					lastName: 'Vaughan',
					email: 'dorothy.vaughan@example.com',
					company: 'West Area Computing',
					currency: 'USD',
					lines: [{ description: 'FORTRAN training', price: 640.25 }],
				},
				PDF_WEBHOOK_PATH,
			);
			timings.pdfWebhook = Date.now() - t;
			expect({ status: r.status, type: r.headers.get('content-type') }).toEqual({
				status: 200,
				type: expect.stringContaining('application/pdf'),
			});
			const invoiceId = r.headers.get('x-invoice-id') ?? '';
			expect(invoiceId).toMatch(/^inv_\d+$/);
			expect(r.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
			const doc = await PDFDocument.load(r.bytes);
			expect(doc.getTitle()).toBe(`Invoice ${invoiceId}`);
			expect(sandbox!.records().invoices).toContainEqual(
				expect.objectContaining({ id: invoiceId, amount: 640.25, currency: 'USD' }),
			);
			const executionId = r.headers.get('x-execution-id') ?? '';
			await waitUntilFinished(executionId);
			expect(main!.output()).toMatch(
				new RegExp(`Enqueued execution ${executionId} \\(job \\d+\\)`),
			);
			expect(workersThatRan(executionId)).toHaveLength(1);
			// The service's own PDF, byte for byte: in the webhook's answer and in the database.
			const served = await fetch(`${sandbox!.pdfRootUrl}/files/${invoiceId}.pdf`);
			const original = Buffer.from(await served.arrayBuffer());
			expect(r.bytes.equals(original)).toBe(true);
			await expectPdfStored(executionId, invoiceId, original);
		});

		/** Where n8n kept the PDF: byte for byte the given file. */
		async function expectPdfStored(executionId: string, invoiceId: string, bytes: Buffer) {
			// database mode: the binary_data table, one row per file of the execution.
			expect(
				await pg!.query(
					`SELECT "fileName", "mimeType", "fileSize", md5(data) FROM binary_data WHERE "sourceType" = 'execution' AND "sourceId" = '${executionId}'`,
				),
			).toBe(`${invoiceId}.pdf|application/pdf|${bytes.length}|${md5(bytes)}`);
		}

		test('Retry of an execution stopped at line 7 of 12 (a refusal), run by a worker: each line invoiced once, item i names line i', async () => {
			// Published through the main's REST API (no CLI boot): the workers read it from PostgreSQL.
			const t = Date.now();
			const credential = await credentialOnce();
			const lines: LinesSetup = {
				sandbox: sandbox!,
				workflowId: (await publishWorkflows(main!, [linesWorkflow(credential, LINES_PATH)]))[0],
				path: LINES_PATH,
				customerId: await serviceCustomer(sandbox!, 'queue.lines@example.com'),
			};
			const batch = `queue-${VERSION}`;
			const failed = await failedBatch(main!, lines, batch, 'refuse');
			expect(failed.status).toBe('error');
			const result = await retryBatch(main!, sandbox!, batch, failed, false);
			timings.retry = Date.now() - t;
			console.log(
				`[queue e2e ${VERSION}] ${batch}: invoices per line after the failure ${result.before}, after the retry ${result.after}`,
			);
			expectRetryCompleted(sandbox!, batch, failed, result);
			// Both ran on a worker: the retry is a job in the queue like any execution.
			for (const id of [failed.id, result.retried.id]) {
				await waitUntilFinished(id);
				expect(workersThatRan(id)).toHaveLength(1);
			}
		});

		test('HTTP 500 on line 7 of 12; Retry on a worker (fails again on line 7), then Retry of the original once more: nothing the first Retry invoiced is invoiced again', async () => {
			const credential = await credentialOnce();
			const lines: LinesSetup = {
				sandbox: sandbox!,
				workflowId: (
					await publishWorkflows(main!, [linesWorkflow(credential, SIBLINGS_PATH, 7)])
				)[0],
				path: SIBLINGS_PATH,
				customerId: await serviceCustomer(sandbox!, 'queue.siblings@example.com'),
			};
			const batch = `queue-siblings-${VERSION}`;
			const failed = await failedBatch(main!, lines, batch, 'http500');
			expect(failed.status).toBe('error');
			const allButLine7 = Array.from({ length: LINES }, (_, index) =>
				index === FAILING_LINE - 1 ? 0 : 1,
			);
			const first = await retryBatch(main!, sandbox!, batch, failed, false);
			const second = await retryBatch(main!, sandbox!, batch, failed, false);
			console.log(
				`[queue e2e ${VERSION}] ${batch}: invoices per line after the failure ${first.before}, after the first retry ${first.after}, after the original's second retry ${second.after}`,
			);
			// The first retry invoiced lines the failed run had not reached: the second one had them to send again.
			expect(first.before.some((count, index) => count === 0 && index !== FAILING_LINE - 1)).toBe(
				true,
			);
			expect(first.after).toEqual(allButLine7);
			expect(second.after).toEqual(allButLine7);
			for (const { retried } of [first, second]) {
				expect(retried).toMatchObject({ status: 'error', mode: 'retry', retryOf: failed.id });
				await waitUntilFinished(retried.id);
				expect(workersThatRan(retried.id)).toHaveLength(1);
			}
		});

		test('HTTP 500 on line 7 of 12; Retry on a worker names line 7 with its resend code; that code entered, Retry with current workflow on a worker: each line once', async () => {
			const credential = await credentialOnce();
			const lines: LinesSetup = {
				sandbox: sandbox!,
				workflowId: (await publishWorkflows(main!, [linesWorkflow(credential, RESEND_PATH, 9)]))[0],
				path: RESEND_PATH,
				customerId: await serviceCustomer(sandbox!, 'queue.resend@example.com'),
			};
			const batch = `queue-resend-${VERSION}`;
			const failed = await failedBatch(main!, lines, batch, 'http500');
			expect(failed.status).toBe('error');
			const first = await retryBatch(main!, sandbox!, batch, failed, false);
			expect(first.retried).toMatchObject({ status: 'error', mode: 'retry', retryOf: failed.id });
			expect(first.after).toEqual(
				Array.from({ length: LINES }, (_, index) => (index === FAILING_LINE - 1 ? 0 : 1)),
			);
			const [code] = resendCodesOf(failed);
			expect(resendCodesOf(first.retried)).toEqual([code]);
			expect(String(nodeRuns(first.retried.run, INVOICE)[0]?.error?.description)).toContain(
				`item ${FAILING_LINE - 1} (code ${code})`,
			);
			// The user checked the service, found no invoice for line 7, and entered its code in the saved workflow.
			await saveWorkflowNodes(main!, lines.workflowId, (nodes) => {
				const invoice = nodes.find((node) => node.name === INVOICE)!.parameters;
				invoice.options = { ...(invoice.options as object), resendUnknownOf: code };
			});
			const second = await retryBatch(main!, sandbox!, batch, first.retried, true);
			console.log(
				`[queue e2e ${VERSION}] ${batch}: invoices per line after the failure ${first.before}, after the retry ${first.after}, after Resend Unknown Outcomes Of ${code}: ${second.after}`,
			);
			expect(second.retried).toMatchObject({ status: 'success', mode: 'retry' });
			expect(second.after).toEqual(Array.from({ length: LINES }, () => 1));
			expect(hintsOf(second.retried, INVOICE)).toContain(
				`1 item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: item ${FAILING_LINE - 1} (code ${code}).`,
			);
			for (const { retried } of [first, second]) {
				await waitUntilFinished(retried.id);
				expect(workersThatRan(retried.id)).toHaveLength(1);
			}
		});

		/** The keyed event workflow, published once; an existing customer to invoice. */
		let keyed: Promise<{ workflowId: string; customerId: string }> | undefined;
		const keyedOnce = () =>
			(keyed ??= credentialOnce().then(async (credential) => ({
				workflowId: (await publishWorkflows(main!, [eventWorkflow(credential, EVENT_PATH, 5)]))[0],
				customerId: await serviceCustomer(sandbox!, 'queue.keys@example.com'),
			})));
		const eventBody = (eventId: string, customerId: string) => ({
			eventId,
			customerId,
			description: `Event ${eventId}`,
			price: 42,
		});
		/** [items on Created, items on Already Created] of the invoice node. */
		const outputsOf = (execution: SavedExecution) =>
			[0, 1].map((output) => nodeOutput(execution.run, INVOICE, output).length);

		test(
			`Idempotency Key across 2 workers: ${EVENT_PAIRS} events each posted twice at the same instant, ${EVENT_PAIRS} invoices`,
			async () => {
				const { workflowId, customerId } = await keyedOnce();
				const ids = Array.from({ length: EVENT_PAIRS }, (_, n) => `evt-pair-${VERSION}-${n}`);
				// A slower service keeps both deliveries of an event in flight at once.
				sandbox!.configure({ latencyMs: 300 });
				let executions: SavedExecution[];
				const t = Date.now();
				try {
					executions = await executionsStartedBy(
						main!,
						workflowId,
						async () =>
							await Promise.all(
								ids.flatMap((id) =>
									[0, 1].map(
										async () => await postTo(main!, EVENT_PATH, eventBody(id, customerId)),
									),
								),
							),
						2 * EVENT_PAIRS,
						5 * MINUTE,
					);
				} finally {
					sandbox!.configure({ latencyMs: 0 });
				}
				timings.keyPairs = Date.now() - t;
				const invoices = ids.map((id) => invoicesFor(sandbox!, `Event ${id}`).length);
				const ran = new Set(executions.flatMap((e) => workersThatRan(e.id)));
				console.log(
					`[queue e2e ${VERSION}] ${EVENT_PAIRS} events posted twice at once: invoices per event ${invoices.join('')}, workers ${[...ran].join(',')}, ${timings.keyPairs} ms`,
				);
				expect(invoices).toEqual(ids.map(() => 1));
				expect(executions.map((e) => e.status)).toEqual(executions.map(() => 'success'));
				const [created, already] = executions
					.map(outputsOf)
					.reduce(([c, a], [dc, da]) => [c + dc, a + da], [0, 0]);
				expect([created, already]).toEqual([EVENT_PAIRS, EVENT_PAIRS]);
				expect([...ran].sort()).toEqual([1, 2]);
			},
			10 * MINUTE,
		);

		test('every run goes through Redis: the Bull job counter counts each webhook call', async () => {
			// Bull's last job id; Redis answers nil ($-1) before the first job. Read before and after this test's
			// own calls, so the count does not depend on which tests ran before.
			const jobsEnqueued = async () => {
				const id = await redisCommand(redis!.port, 'GET', 'bull:jobs:id');
				return id === '$-1' ? 0 : Number(id);
			};
			const calls = 2;
			const before = await jobsEnqueued();
			for (let i = 0; i < calls; i++) {
				const r = await postWebhook({
					firstName: `R${i}`,
					lastName: 'Redis',
					email: `redis.${i}@example.com`,
					company: '',
					currency: 'EUR',
					lines: [{ description: `Line ${i}`, price: 1 + i }],
				});
				expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });
			}
			expect(await jobsEnqueued()).toBe(before + calls);
		});
	},
);
