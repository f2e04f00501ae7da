// Queue mode (n8n's scale-out): Redis (Debian's redis-server on a free loopback port, no persistence), an
// n8n main (`n8n start`, EXECUTIONS_MODE=queue) that receives the production webhook and enqueues the
// execution, and one `n8n worker` that runs it. Main and worker share the user folder, i.e. the same SQLite
// database, and the encryption key. The workflow creates a customer and an invoice with its PDF.
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
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	freePort,
	importAndPublish,
	invoiceServiceCredential,
	n8nBin,
	n8nEnv,
	packPackage,
	removeHome,
	startN8nServer,
	startProcess,
	waitForWebhook,
	type N8nHome,
	type N8nServer,
	type ProcessHandle,
} from '../../tools/n8n';
import { redisCommand, redisServerBin, startRedis } from '../support/redis';

const MINUTE = 60_000;
const CREDENTIAL = { id: 'credQueueSandbox', name: 'Invoice Service (sandbox)' };
const WEBHOOK_PATH = 'new-customer';
/** The same flow, answering with the PDF itself (made on the worker, kept in n8n's binary data store). */
const PDF_WEBHOOK_PATH = 'new-customer-pdf';

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

describe.each(N8N_VERSIONS)(
	'Invoice Service in n8n %s queue mode (Redis, main + worker)',
	(VERSION) => {
		let home: N8nHome | undefined;
		let sandbox: Sandbox | undefined;
		let redis: ProcessHandle | undefined;
		let redisDir: string | undefined;
		let main: N8nServer | undefined;
		let worker: ProcessHandle | undefined;
		let queueEnv: NodeJS.ProcessEnv = {};
		let redisPort = 0;
		const timings: Record<string, number> = {};

		const postWebhook = async (body: Record<string, unknown>, webhookPath = WEBHOOK_PATH) => {
			const res = await fetch(`${main!.url}/webhook/${webhookPath}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
				signal: AbortSignal.timeout(60_000),
			});
			const text = await res.text();
			let json: unknown;
			try {
				json = JSON.parse(text);
			} catch {
				json = undefined;
			}
			return { status: res.status, text, json: json as WebhookAnswer };
		};

		beforeAll(async () => {
			const t0 = Date.now();
			const redisBin = redisServerBin();
			await ensureN8nInstalled([VERSION]);
			const tarball = await packPackage();
			sandbox = await startSandbox();

			// Redis: loopback only, no RDB/AOF, its own temp dir.
			({ port: redisPort, dir: redisDir, server: redis } = await startRedis(redisBin));
			expect(await redisCommand(redisPort, 'PING')).toBe('+PONG');
			timings.redis = Date.now() - t0;

			home = await createN8nHome(VERSION, tarball);
			queueEnv = {
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: '127.0.0.1',
				QUEUE_BULL_REDIS_PORT: String(redisPort),
				// Same SQLite file for both (the default, <userFolder>/.n8n/database.sqlite); said out loud.
				DB_TYPE: 'sqlite',
				// Make the main instance enqueue everything, manual runs included (production webhooks always are).
				OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
			};
			Object.assign(
				timings,
				await importAndPublish(home, {
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

			const tMain = Date.now();
			main = await startN8nServer(home, { env: queueEnv, timeoutMs: 180_000 });
			timings.mainBoot = Date.now() - tMain;
			timings.webhookRegistered = await waitForWebhook(
				`${main.url}/webhook/${WEBHOOK_PATH}`,
				'POST',
			);
			await waitForWebhook(`${main.url}/webhook/${PDF_WEBHOOK_PATH}`, 'POST');

			// The worker: same user folder (database, key, community package), its own task-runner broker port.
			const tWorker = Date.now();
			worker = startProcess('bash', [NODE24, n8nBin(VERSION), 'worker', '--concurrency=5'], {
				cwd: home.userFolder,
				env: n8nEnv(home, { ...queueEnv, N8N_RUNNERS_BROKER_PORT: String(await freePort()) }),
			});
			await worker.waitFor(/n8n worker is now ready[\s\S]* \* Concurrency: \d+/, 180_000);
			timings.workerBoot = Date.now() - tWorker;
			timings.setup = Date.now() - t0;
		}, 20 * MINUTE);

		afterAll(async () => {
			console.log(`[queue e2e] timings (ms): ${JSON.stringify(timings)}`);
			await Promise.allSettled([worker?.stop(), main?.stop()]);
			await redis?.stop();
			// Keep the logs of the last run for a look after a failure (test-output/ is git-ignored).
			const logDir = path.join(REPO_ROOT, 'test-output', 'e2e-scale');
			fs.mkdirSync(logDir, { recursive: true });
			if (main) fs.writeFileSync(path.join(logDir, `n8n-main-${VERSION}.log`), main.output());
			if (worker) fs.writeFileSync(path.join(logDir, `n8n-worker-${VERSION}.log`), worker.output());
			if (redis) fs.writeFileSync(path.join(logDir, `redis-${VERSION}.log`), redis.output());
			await sandbox?.close();
			if (home) removeHome(home);
			if (redisDir) fs.rmSync(redisDir, { recursive: true, force: true });
		});

		test('main and worker both run in scaling (queue) mode on the shared SQLite database and Redis', async () => {
			// n8n's own warning is the sign both processes took the queue-mode path with SQLite.
			expect(main!.output()).toMatch(/Scaling mode is not officially supported with sqlite/);
			expect(worker!.output()).toMatch(/Scaling mode is not officially supported with sqlite/);
			expect(worker!.output()).toMatch(/ \* Concurrency: 5/);
			// n8n's Bull queue "jobs" lives in our Redis. Bull writes its first keys a moment after the worker
			// reports ready (seen once in CI: none yet), so give it up to 15 s before judging.
			let keys = '';
			for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(250)) {
				keys = await redisCommand(redisPort, 'KEYS', 'bull:jobs:*');
				if (/bull:jobs:/.test(keys)) break;
			}
			expect(keys).toMatch(/bull:jobs:/);
		});

		test('POST /webhook/new-customer: the worker creates the customer and the invoice with its PDF', async () => {
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

			// Enqueued by the main instance, run by the worker.
			const id = answer.executionId;
			await worker!.waitFor(new RegExp(`Worker finished execution ${id} `), 30_000);
			expect(main!.output()).toMatch(new RegExp(`Enqueued execution ${id} \\(job \\d+\\)`));
			expect(worker!.output()).toMatch(new RegExp(`Worker started execution ${id} \\(job \\d+\\)`));
		});

		test('three concurrent webhook calls: three customers and invoices, each run on the worker', async () => {
			const emails = ['a.one@example.com', 'b.two@example.com', 'c.three@example.com'];
			const answers = await Promise.all(
				emails.map((email, i) =>
					postWebhook({
						firstName: `P${i}`,
						lastName: 'Parallel',
						email,
						company: '',
						currency: 'GBP',
						lines: [{ description: `Line ${i}`, price: 10 + i }],
					}),
				),
			);
			for (const r of answers)
				expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });
			const ids = answers.map((r) => r.json.executionId);
			expect(new Set(ids).size).toBe(3);
			const { customers, invoices } = sandbox!.records();
			for (const [i, r] of answers.entries()) {
				expect(customers).toContainEqual(
					expect.objectContaining({ id: r.json.customerId, email: emails[i] }),
				);
				expect(invoices).toContainEqual(
					expect.objectContaining({
						id: r.json.invoiceId,
						customerId: r.json.customerId,
						amount: 10 + i,
					}),
				);
				await worker!.waitFor(
					new RegExp(`Worker finished execution ${r.json.executionId} `),
					30_000,
				);
			}
		});

		test('a failing run (duplicate e-mail) fails on the worker and the webhook caller gets an error, not a hang', async () => {
			const before = sandbox!.records().invoices.length;
			const rejectionsBefore = sandbox!.stats().duplicateEmailRejections;
			const finished = (out: string) => out.match(/Worker finished execution \d+ /g)?.length ?? 0;
			const runsBefore = finished(worker!.output());
			const r = await postWebhook({
				firstName: 'Mary',
				lastName: 'Jackson',
				email: 'mary.jackson@example.com',
				company: '',
				currency: 'EUR',
				lines: [{ description: 'x', price: 1 }],
			});
			// responseNode mode: n8n answers 500 {"message":"Workflow execution failed"} when the run fails.
			expect({ status: r.status, text: r.text }).toEqual({
				status: 500,
				text: expect.stringContaining('Workflow execution failed'),
			});
			expect(sandbox!.records().invoices).toHaveLength(before);
			// The service refused the duplicate (409), and the run that got it was the worker's next one
			// (2.x also logs the node's message there: "A customer with the e-mail ... already exists").
			expect(sandbox!.stats().duplicateEmailRejections).toBe(rejectionsBefore + 1);
			await worker!.waitFor(
				new RegExp(`(Worker finished execution \\d+ [\\s\\S]*){${runsBefore + 1}}`),
				30_000,
			);
		});

		test('the PDF made on the worker comes back through the main instance as the webhook answer', async () => {
			const res = await fetch(`${main!.url}/webhook/${PDF_WEBHOOK_PATH}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({
					firstName: 'Dorothy',
					lastName: 'Vaughan',
					email: 'dorothy.vaughan@example.com',
					company: 'West Area Computing',
					currency: 'USD',
					lines: [{ description: 'FORTRAN training', price: 640.25 }],
				}),
				signal: AbortSignal.timeout(60_000),
			});
			const bytes = Buffer.from(await res.arrayBuffer());
			expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
				status: 200,
				type: expect.stringContaining('application/pdf'),
			});
			const invoiceId = res.headers.get('x-invoice-id') ?? '';
			expect(invoiceId).toMatch(/^inv_\d+$/);
			expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
			const doc = await PDFDocument.load(bytes);
			expect(doc.getTitle()).toBe(`Invoice ${invoiceId}`);
			expect(sandbox!.records().invoices).toContainEqual(
				expect.objectContaining({ id: invoiceId, amount: 640.25, currency: 'USD' }),
			);
			const executionId = res.headers.get('x-execution-id') ?? '';
			await worker!.waitFor(new RegExp(`Worker finished execution ${executionId} `), 30_000);
			expect(main!.output()).toMatch(
				new RegExp(`Enqueued execution ${executionId} \\(job \\d+\\)`),
			);
		});

		test('every run went through Redis: the Bull job counter counts all six webhook calls', async () => {
			expect(await redisCommand(redisPort, 'GET', 'bull:jobs:id')).toBe('6');
		});
	},
);
