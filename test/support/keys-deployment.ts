// The queue-mode deployment the Idempotency Key suites share (test/e2e-scale/keys-across-workers.test.ts,
// clocks-apart.test.ts): PostgreSQL, Redis, the sandbox, an n8n main and two workers (concurrency 5 each), each
// process with its own user folder. The workers reach PostgreSQL through a proxy (test/support/pg-drop-proxy.ts,
// one listening port per worker, so a fault says which worker it hit) that passes everything through until a
// test arms it. A worker can be started again with an environment of its own (e.g. its clock moved). Each
// scenario publishes its own keyed invoice workflow (its own rows in n8n's processed-data store) and invoices its
// own customer at the sandbox, whose invoices per event are the proof.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { sleep } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	nodeRuns,
	packPackage,
	removeHome,
	startN8nServer,
	startN8nWorker,
	type N8nHome,
	type N8nServer,
	type ProcessHandle,
} from '../../tools/n8n';
import { INVOICE, eventWorkflow, serviceCustomer } from './exactly-once';
import { postWebhook, publishWorkflows, saveCredential, type SavedExecution } from './executions';
import { startDropProxy, type DropProxy } from './pg-drop-proxy';
import { postgresBinDir, startPostgres, type Postgres } from './postgres';
import { redisServerBin, startRedis, type RedisServer } from './redis';

export const MINUTE = 60_000;
export const WORKER_CONCURRENCY = 5;
const FINISHED = new Set(['success', 'error', 'crashed', 'canceled']);

/** Waits until `ready()` says so (a create held, a fault answered), up to `timeoutMs`. */
export async function until(what: string, ready: () => boolean, timeoutMs = 3 * MINUTE) {
	for (const deadline = Date.now() + timeoutMs; !ready(); await sleep(100)) {
		if (Date.now() > deadline) throw new Error(`not ${what} after ${timeoutMs} ms`);
	}
}

/** The Invoice node's error in a saved execution: message and description. */
export const itemError = (execution: SavedExecution) => {
	const error = nodeRuns(execution.run, INVOICE)[0]?.error;
	return `${String(error?.message ?? '')}\n${String(error?.description ?? '')}`;
};

export class KeysDeployment {
	sandbox!: Sandbox;
	pg!: Postgres;
	proxy!: DropProxy;
	main!: N8nServer;
	credential!: { id: string; name: string };
	/** The running worker at each index (0-based). */
	readonly workers: ProcessHandle[] = [];
	/** Every worker ever started at each index, for its logs (a restart keeps the earlier one's). */
	private readonly started: ProcessHandle[][] = [[], []];
	private readonly homes: N8nHome[] = [];
	private redis?: RedisServer;
	private workerEnv: NodeJS.ProcessEnv = {};
	readonly timings: Record<string, number> = {};

	/** `logName`: the logs go to test-output/e2e-scale/<logName>-<process>-<version>.log. */
	constructor(
		readonly version: string,
		private readonly logName: string,
	) {}

	log(text: string): void {
		console.log(`[${this.logName} ${this.version}] ${text}`);
	}

	/**
	 * Starts everything; `workerEnvs[i]` is added to worker i's environment. Whatever did start is kept, so that
	 * stop() ends it when something else failed.
	 */
	async start(workerEnvs: NodeJS.ProcessEnv[] = []): Promise<void> {
		const t0 = Date.now();
		await ensureN8nInstalled([this.version]);
		const tarball = await packPackage();
		// Debian's programs, installed first on a fresh machine.
		postgresBinDir();
		const redisBin = redisServerBin();
		const [failed] = (
			await Promise.allSettled([
				startPostgres().then((started) => (this.pg = started)),
				startRedis(redisBin).then((started) => (this.redis = started)),
				startSandbox().then((started) => (this.sandbox = started)),
			])
		).filter((result): result is PromiseRejectedResult => result.status === 'rejected');
		if (failed) throw failed.reason;
		this.proxy = await startDropProxy(this.pg.port, 2);
		this.homes.push(
			...(await Promise.all(
				Array.from({ length: 3 }, async () => await createN8nHome(this.version, tarball)),
			)),
		);
		const queueEnv: NodeJS.ProcessEnv = {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(this.redis!.port),
			...this.pg.env,
		};
		this.workerEnv = queueEnv;
		// The main first: its start creates n8n's tables, which the workers then find.
		// The main takes every webhook of a storm: a pool of 10 database connections instead of n8n's 2 (n8n
		// 1.123's main ran out of its 2 under 300 webhooks in 5 s on a busy 2-core machine). Workers keep 2.
		this.main = await startN8nServer(this.homes[0], {
			env: { ...queueEnv, DB_POSTGRESDB_POOL_SIZE: '10' },
		});
		this.timings.mainBoot = Date.now() - t0;
		await Promise.all([0, 1].map(async (i) => await this.startWorker(i, workerEnvs[i])));
		await this.main.setupOwner();
		this.credential = await saveCredential(this.main, 'Invoice Service (sandbox)', this.sandbox);
		this.timings.setup = Date.now() - t0;
	}

	/**
	 * Starts worker `index` (0-based) with `env` added, through its own port of the proxy, and waits until it is
	 * ready; a worker still running there is stopped first (n8n lets its running executions finish).
	 */
	async startWorker(index: number, env: NodeJS.ProcessEnv = {}): Promise<void> {
		await this.workers[index]?.stop();
		const worker = await startN8nWorker(this.homes[index + 1], {
			env: { ...this.workerEnv, DB_POSTGRESDB_PORT: String(this.proxy.ports[index]), ...env },
			concurrency: WORKER_CONCURRENCY,
		});
		this.workers[index] = worker;
		this.started[index].push(worker);
	}

	/** Everything worker `index` (0-based) printed, over its restarts. */
	workerOutput(index: number): string {
		return this.started[index].map((w) => w.output()).join('\n');
	}

	/** Which workers (1-based) logged that they started this execution. */
	workersThatRan(executionId: string): number[] {
		const started = new RegExp(`Worker started execution ${executionId} \\(job \\d+\\)`);
		return [1, 2].filter((n) => started.test(this.workerOutput(n - 1)));
	}

	async stop(): Promise<void> {
		this.log(`timings (ms): ${JSON.stringify(this.timings)}`);
		await this.pg?.resume();
		await Promise.allSettled([...this.workers.map((w) => w.stop()), this.main?.stop()]);
		await this.proxy?.close();
		await Promise.allSettled([this.redis?.server.stop(), this.pg?.close()]);
		const logDir = path.join(REPO_ROOT, 'test-output', 'e2e-scale');
		fs.mkdirSync(logDir, { recursive: true });
		const save = (name: string, text: string) =>
			fs.writeFileSync(path.join(logDir, `${this.logName}-${name}-${this.version}.log`), text);
		if (this.main) save('n8n-main', this.main.output());
		for (const i of [0, 1]) save(`n8n-worker-${i + 1}`, this.workerOutput(i));
		await this.sandbox?.close();
		for (const home of this.homes) removeHome(home);
		if (this.redis) fs.rmSync(this.redis.dir, { recursive: true, force: true });
	}

	/**
	 * Waits until the main says it is ready (GET /healthz/readiness: its database reachable). Under a storm on
	 * a busy machine n8n 1.123's main can miss its database ping and answer 503 "Database is not ready!" for a
	 * few seconds.
	 */
	async mainReady(timeoutMs = 5 * MINUTE): Promise<void> {
		for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
			const res = await fetch(`${this.main.url}/healthz/readiness`).catch(() => undefined);
			await res?.arrayBuffer();
			if (res?.status === 200) return;
			if (Date.now() > deadline) throw new Error(`main not ready after ${timeoutMs} ms`);
		}
	}

	/** Event ids `<prefix>-<version>-<n>`, n from 1. */
	events(prefix: string, count: number): string[] {
		return Array.from({ length: count }, (_, i) => `${prefix}-${this.version}-${i + 1}`);
	}

	/** A keyed invoice workflow of its own, published, and a customer of its own at the service. */
	async scenario(name: string, options: Record<string, unknown> = {}) {
		const { main, sandbox, pg } = this;
		const webhookPath = `keys-${name}`;
		await this.mainReady();
		const [workflowId] = await publishWorkflows(main, [
			eventWorkflow(this.credential, webhookPath, 2, options),
		]);
		const customerId = await serviceCustomer(sandbox, `${name}.${this.version}@example.com`);
		const deliveries = { accepted: 0, unavailable: 0 };
		/**
		 * One delivery of an event: the Webhook answers once the execution is enqueued. A 5xx (n8n 1.123's main
		 * out of database connections: 500 "timeout exceeded when trying to connect", or 503 after a missed database
		 * ping) is delivered again once the main is ready, as a webhook sender does.
		 */
		const deliver = async (eventId: string) => {
			for (;;) {
				const status = await postWebhook(main, webhookPath, {
					eventId,
					customerId,
					description: eventId,
					price: 10,
				});
				if (status === 200) return void deliveries.accepted++;
				if (status < 500) throw new Error(`delivery of ${eventId}: HTTP ${status}`);
				deliveries.unavailable++;
				await this.mainReady();
			}
		};
		/** The service's invoices per event (the line's description is the event id). */
		const invoicesPerEvent = () => {
			const counts = new Map<string, number>();
			for (const invoice of sandbox.records().invoices) {
				if (invoice.customerId !== customerId) continue;
				const event = String(invoice.items[0]?.description);
				counts.set(event, (counts.get(event) ?? 0) + 1);
			}
			return counts;
		};
		/** Invoices, events invoiced more than once, events never invoiced. */
		const tally = (events: string[]) => {
			const counts = invoicesPerEvent();
			return {
				invoices: [...counts.values()].reduce((a, b) => a + b, 0),
				duplicates: events.filter((e) => (counts.get(e) ?? 0) > 1).length,
				lost: events.filter((e) => (counts.get(e) ?? 0) === 0).length,
			};
		};
		/**
		 * The entries of the workflow's lock row in n8n's processed-data store (scope workflow, context ''): none
		 * once every execution has finished (a lock is unlocked when its batch is written).
		 */
		const lockEntries = async () => {
			const value = await pg.query(
				`SELECT value FROM processed_data WHERE "workflowId" = '${workflowId}' AND context = ''`,
			);
			return value ? (JSON.parse(value) as { data: unknown[] }).data.length : 0;
		};
		/** The workflow's executions in PostgreSQL, oldest first: id and status. */
		const executions = async () =>
			(
				await pg.query(
					`SELECT id, status FROM execution_entity WHERE "workflowId" = '${workflowId}' ORDER BY id`,
				)
			)
				.split('\n')
				.filter(Boolean)
				.map((row) => {
					const [id, status] = row.split('|');
					return { id, status };
				});
		/**
		 * Waits until `count` executions exist and all have finished (but those in `except`, e.g. a killed
		 * worker's); their statuses counted.
		 */
		const settled = async (count: number, timeoutMs = 10 * MINUTE, except = new Set<string>()) => {
			for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
				const all = (await executions()).filter((e) => !except.has(e.id));
				if (all.length >= count - except.size && all.every((e) => FINISHED.has(e.status))) {
					const statuses: Record<string, number> = {};
					for (const e of all) statuses[e.status] = (statuses[e.status] ?? 0) + 1;
					return { all, statuses };
				}
				if (Date.now() > deadline)
					throw new Error(
						`${all.length} of ${count} executions, ${all.filter((e) => !FINISHED.has(e.status)).length} unfinished, after ${timeoutMs} ms`,
					);
			}
		};
		/**
		 * How many of the workflow's executions saved a run whose data holds every one of `texts` (an item's error,
		 * a key). The data is flatted JSON: a quote inside a text is saved as \".
		 */
		const executionsSaying = async (...texts: string[]) =>
			Number(
				await pg.query(
					`SELECT count(*) FROM execution_data d JOIN execution_entity e ON e.id = d."executionId" WHERE e."workflowId" = '${workflowId}'${texts.map((text) => ` AND position('${text.replace(/'/g, "''")}' in d.data) > 0`).join('')}`,
				),
			);
		return {
			workflowId,
			customerId,
			deliveries,
			deliver,
			invoicesPerEvent,
			tally,
			executions,
			settled,
			lockEntries,
			executionsSaying,
		};
	}
}

export type KeyedScenario = Awaited<ReturnType<KeysDeployment['scenario']>>;
