// Idempotency Keys across queue-mode workers (issue 27): PostgreSQL, Redis, an n8n main and two workers
// (concurrency 5 each), as test/e2e-scale/queue-mode.test.ts deploys them. The workflow is invoice-only
// (Webhook → Invoice → Create for a customer made at the service beforehand, Idempotency Key = the event id),
// so no 409 of a duplicate customer can hide a duplicate: the sandbox's invoices per event are the proof.
// The workers reach PostgreSQL through a proxy (test/support/pg-drop-proxy.ts) that passes everything through,
// except in the test that makes the store fail after its commit. Each test publishes its own workflow (its own
// rows in n8n's processed-data store) and invoices its own customer, so none depends on another.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { sleep } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	N8N_VERSIONS,
	NODE24,
	READY_LIMIT_MS,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	n8nBin,
	n8nEnv,
	nodeRuns,
	packPackage,
	removeHome,
	startN8nServer,
	startProcess,
	type N8nHome,
	type N8nServer,
	type ProcessHandle,
} from '../../tools/n8n';
import { INVOICE, eventWorkflow, invoiceError, serviceCustomer } from '../support/exactly-once';
import {
	finishedExecution,
	postWebhook,
	publishWorkflows,
	saveCredential,
	type SavedExecution,
} from '../support/executions';
import { startDropProxy, type DropProxy } from '../support/pg-drop-proxy';
import { postgresBinDir, startPostgres, type Postgres } from '../support/postgres';
import { redisServerBin, startRedis, type RedisServer } from '../support/redis';

const MINUTE = 60_000;
const WORKER_CONCURRENCY = 5;
const FINISHED = new Set(['success', 'error', 'crashed', 'canceled']);

type Credential = { id: string; name: string };

describe.each(N8N_VERSIONS)(
	'Idempotency Keys across two queue-mode workers of n8n %s (PostgreSQL, Redis)',
	(VERSION) => {
		const homes: N8nHome[] = [];
		const workers: ProcessHandle[] = [];
		let sandbox: Sandbox | undefined;
		let redis: RedisServer | undefined;
		let pg: Postgres | undefined;
		let proxy: DropProxy | undefined;
		let main: N8nServer | undefined;
		let credential: Credential;
		let workerEnv: NodeJS.ProcessEnv = {};
		const timings: Record<string, number> = {};
		const log = (text: string) => console.log(`[keys across workers ${VERSION}] ${text}`);

		/** Starts (or restarts) worker `index` (0-based) and waits until it is ready. */
		async function startWorker(index: number): Promise<void> {
			const worker = startProcess(
				'bash',
				[NODE24, n8nBin(VERSION), 'worker', `--concurrency=${WORKER_CONCURRENCY}`],
				{ cwd: homes[index + 1].userFolder, env: n8nEnv(homes[index + 1], workerEnv) },
			);
			workers[index] = worker;
			await worker.waitFor(/n8n worker is now ready[\s\S]* \* Concurrency: \d+/, READY_LIMIT_MS);
		}

		beforeAll(async () => {
			const t0 = Date.now();
			await ensureN8nInstalled([VERSION]);
			const tarball = await packPackage();
			// Debian's programs, installed first on a fresh machine.
			postgresBinDir();
			const redisBin = redisServerBin();
			// Each kept as soon as it is up, so that afterAll stops it when another one failed to start.
			const [failed] = (
				await Promise.allSettled([
					startPostgres().then((started) => (pg = started)),
					startRedis(redisBin).then((started) => (redis = started)),
					startSandbox().then((started) => (sandbox = started)),
				])
			).filter((result): result is PromiseRejectedResult => result.status === 'rejected');
			if (failed) throw failed.reason;
			if (!pg || !redis || !sandbox) throw new Error('unreachable: all three started');
			proxy = await startDropProxy(pg.port);
			homes.push(
				...(await Promise.all(Array.from({ length: 3 }, () => createN8nHome(VERSION, tarball)))),
			);
			const queueEnv: NodeJS.ProcessEnv = {
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: '127.0.0.1',
				QUEUE_BULL_REDIS_PORT: String(redis.port),
				...pg.env,
			};
			workerEnv = { ...queueEnv, DB_POSTGRESDB_PORT: String(proxy.port) };
			// The main first: its start creates n8n's tables, which the workers then find.
			// The main takes every webhook of a storm: a pool of 10 database connections instead of n8n's 2 (n8n
			// 1.123's main ran out of its 2 under 300 webhooks in 5 s on a busy 2-core machine). Workers keep 2.
			main = await startN8nServer(homes[0], {
				env: { ...queueEnv, DB_POSTGRESDB_POOL_SIZE: '10' },
			});
			timings.mainBoot = Date.now() - t0;
			await Promise.all([startWorker(0), startWorker(1)]);
			await main.setupOwner();
			credential = await saveCredential(main, 'Invoice Service (sandbox)', sandbox);
			timings.setup = Date.now() - t0;
		}, 20 * MINUTE);

		afterAll(async () => {
			log(`timings (ms): ${JSON.stringify(timings)}`);
			await Promise.allSettled([...workers.map((w) => w.stop()), main?.stop()]);
			await proxy?.close();
			await Promise.allSettled([redis?.server.stop(), pg?.close()]);
			const logDir = path.join(REPO_ROOT, 'test-output', 'e2e-scale');
			fs.mkdirSync(logDir, { recursive: true });
			const save = (name: string, text: string) =>
				fs.writeFileSync(path.join(logDir, `keys-${name}-${VERSION}.log`), text);
			if (main) save('n8n-main', main.output());
			for (const [i, w] of workers.entries()) save(`n8n-worker-${i + 1}`, w.output());
			await sandbox?.close();
			for (const home of homes) removeHome(home);
			if (redis) fs.rmSync(redis.dir, { recursive: true, force: true });
		}, 3 * MINUTE);

		// -----------------------------------------------------------------------------------------------------

		/** A keyed invoice workflow of its own, published, and a customer of its own at the service. */
		/**
		 * Waits until the main says it is ready (GET /healthz/readiness: its database reachable). Under a storm on
		 * a busy machine n8n 1.123's main can miss its database ping and answer 503 "Database is not ready!" for a
		 * few seconds.
		 */
		async function mainReady(timeoutMs = 5 * MINUTE) {
			for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
				const res = await fetch(`${main!.url}/healthz/readiness`).catch(() => undefined);
				await res?.arrayBuffer();
				if (res?.status === 200) return;
				if (Date.now() > deadline) throw new Error(`main not ready after ${timeoutMs} ms`);
			}
		}

		/** A keyed invoice workflow of its own, published, and a customer of its own at the service. */
		async function scenario(name: string, options: Record<string, unknown> = {}) {
			const webhookPath = `keys-${name}`;
			await mainReady();
			const [workflowId] = await publishWorkflows(main!, [
				eventWorkflow(credential, webhookPath, 2, options),
			]);
			const customerId = await serviceCustomer(sandbox!, `${name}.${VERSION}@example.com`);
			const deliveries = { accepted: 0, unavailable: 0 };
			/**
			 * One delivery of an event: the Webhook answers once the execution is enqueued. A 5xx (n8n 1.123's main
			 * out of database connections: 500 "timeout exceeded when trying to connect", or 503 after a missed database
			 * ping) is delivered again once the main is ready, as a webhook sender does.
			 */
			const deliver = async (eventId: string) => {
				for (;;) {
					const status = await postWebhook(main!, webhookPath, {
						eventId,
						customerId,
						description: eventId,
						price: 10,
					});
					if (status === 200) return void deliveries.accepted++;
					if (status < 500) throw new Error(`delivery of ${eventId}: HTTP ${status}`);
					deliveries.unavailable++;
					await mainReady();
				}
			};
			/** The service's invoices per event (the line's description is the event id). */
			const invoicesPerEvent = () => {
				const counts = new Map<string, number>();
				for (const invoice of sandbox!.records().invoices) {
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
			 * once every execution has finished (a lock is released when its batch is written).
			 */
			const lockEntries = async () => {
				const value = await pg!.query(
					`SELECT value FROM processed_data WHERE "workflowId" = '${workflowId}' AND context = ''`,
				);
				return value ? (JSON.parse(value) as { data: unknown[] }).data.length : 0;
			};
			/** The workflow's executions in PostgreSQL, oldest first: id and status. */
			const executions = async () =>
				(
					await pg!.query(
						`SELECT id, status FROM execution_entity WHERE "workflowId" = '${workflowId}' ORDER BY id`,
					)
				)
					.split('\n')
					.filter(Boolean)
					.map((row) => {
						const [id, status] = row.split('|');
						return { id, status };
					});
			/** Waits until `count` executions exist and all have finished; their statuses counted. */
			const settled = async (count: number, timeoutMs = 10 * MINUTE) => {
				for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
					const all = await executions();
					if (all.length >= count && all.every((e) => FINISHED.has(e.status))) {
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
			};
		}

		/** Which workers (1-based) logged that they started this execution. */
		const workersThatRan = (executionId: string) => {
			const started = new RegExp(`Worker started execution ${executionId} \\(job \\d+\\)`);
			return [1, 2].filter((n) => started.test(workers[n - 1].output()));
		};

		/** Waits until the sandbox says so (a create held, a fault answered), up to `timeoutMs`. */
		async function until(what: string, ready: () => boolean, timeoutMs = 3 * MINUTE) {
			for (const deadline = Date.now() + timeoutMs; !ready(); await sleep(100)) {
				if (Date.now() > deadline) throw new Error(`not ${what} after ${timeoutMs} ms`);
			}
		}

		const events = (prefix: string, count: number) =>
			Array.from({ length: count }, (_, i) => `${prefix}-${VERSION}-${i + 1}`);

		const itemError = (execution: SavedExecution) => {
			const error = nodeRuns(execution.run, INVOICE)[0]?.error;
			return `${String(error?.message ?? '')}\n${String(error?.description ?? '')}`;
		};

		// -----------------------------------------------------------------------------------------------------

		test(
			'(a) 40 events, each delivered twice at the same instant: exactly 40 invoices',
			async () => {
				const s = await scenario('twice');
				const ids = events('twice', 40);
				const t = Date.now();
				await Promise.all(ids.flatMap((id) => [s.deliver(id), s.deliver(id)]));
				const { statuses } = await s.settled(80);
				timings.twiceSettled = Date.now() - t;
				const result = s.tally(ids);
				log(
					`(a) ${JSON.stringify({ ...result, statuses, settledMs: timings.twiceSettled, deliveries: s.deliveries })}`,
				);
				const failed = (await s.executions()).find((e) => e.status !== 'success');
				if (failed)
					log(`(a) a failed execution: ${itemError(await finishedExecution(main!, failed.id))}`);
				expect({ ...result, lockEntries: await s.lockEntries() }).toEqual({
					invoices: 40,
					duplicates: 0,
					lost: 0,
					lockEntries: 0,
				});
				expect(statuses).toEqual({ success: 80 });
			},
			15 * MINUTE,
		);

		test(
			'(b) 300 events in 5 s, 20 % re-delivered 0-2 s later, then each once more: 300 invoices, 0 new in the last pass',
			async () => {
				const s = await scenario('storm');
				const ids = events('storm', 300);
				const t = Date.now();
				// The storm: each event at a random instant of 5 s; every fifth again 0-2 s after its first delivery.
				await Promise.all(
					ids.map(async (id, i) => {
						await sleep(Math.random() * 5_000);
						await s.deliver(id);
						if (i % 5 !== 0) return;
						await sleep(Math.random() * 2_000);
						await s.deliver(id);
					}),
				);
				const storm = await s.settled(360);
				timings.stormSettled = Date.now() - t;
				const failed = storm.all.find((e) => e.status !== 'success');
				if (failed)
					log(`(b) a failed execution: ${itemError(await finishedExecution(main!, failed.id))}`);
				const afterStorm = s.tally(ids);
				// The last pass, once the storm has settled: a key erased by another key's write would invoice again.
				const t2 = Date.now();
				await Promise.all(ids.map(async (id) => await s.deliver(id)));
				const last = await s.settled(660);
				timings.lastPassSettled = Date.now() - t2;
				const afterLast = s.tally(ids);
				const perWorker = [1, 2].map(
					(n) => storm.all.filter(({ id }) => workersThatRan(id).includes(n)).length,
				);
				log(
					`(b) ${JSON.stringify({ afterStorm, stormStatuses: storm.statuses, stormSettledMs: timings.stormSettled, perWorker, afterLast, newInLastPass: afterLast.invoices - afterStorm.invoices, lastStatuses: last.statuses, lastPassSettledMs: timings.lastPassSettled, deliveries: s.deliveries })}`,
				);
				expect({ ...afterStorm, lockEntries: await s.lockEntries() }).toEqual({
					invoices: 300,
					duplicates: 0,
					lost: 0,
					lockEntries: 0,
				});
				expect(afterLast).toEqual(afterStorm);
				expect(last.statuses).toEqual({ success: 660 });
				// Both workers took part.
				for (const n of perWorker) expect(n).toBeGreaterThan(0);
			},
			20 * MINUTE,
		);

		test(
			'(c) a first create refused (400) while its re-delivery waits on the other worker: exactly 1 invoice',
			async () => {
				const s = await scenario('refused');
				const [id] = events('refused', 1);
				// The service holds every create 3 s, so the re-delivery arrives while the first is still in flight.
				sandbox!.configure({ latencyMs: 3_000 });
				try {
					sandbox!.faultOnce({ bodyContains: `"description":"${id}"`, fault: 'refuse' });
					const t = Date.now();
					await s.deliver(id);
					await until('holding the first create', () => sandbox!.stats().concurrency.current === 1);
					await s.deliver(id);
					const { all } = await s.settled(2);
					timings.refused = Date.now() - t;
					const [first, second] = await Promise.all(
						all.map(async (e) => await finishedExecution(main!, e.id)),
					);
					log(
						`(c) ${JSON.stringify({ statuses: [first.status, second.status], workers: all.map((e) => workersThatRan(e.id)), invoices: s.tally([id]) })}`,
					);
					expect(sandbox!.stats().faults.refused).toBeGreaterThanOrEqual(1);
					expect(first.status).toBe('error');
					expect(invoiceError(first)).toMatch(/400|refused/i);
					expect(second.status).toBe('success');
					expect(s.tally([id])).toEqual({ invoices: 1, duplicates: 0, lost: 0 });
					// The two deliveries ran on different workers: the wait crossed processes.
					expect([...workersThatRan(first.id), ...workersThatRan(second.id)].sort()).toEqual([
						1, 2,
					]);
				} finally {
					sandbox!.configure({ latencyMs: 0 });
				}
			},
			15 * MINUTE,
		);

		test(
			"(e) the store fails after its commit (connection dropped once): the item fails naming n8n's database, the next delivery creates exactly 1",
			async () => {
				const s = await scenario('store');
				const [id] = events('store', 1);
				// n8n keeps md5/base64 hashes; the claim's write is the first to carry the key's "claim:" entry.
				const marker = createHash('md5').update(`claim:${id}`).digest('base64');
				const dropped = proxy!.dropAfterCommit(marker);
				await s.deliver(id);
				await dropped;
				const [failed] = (await s.settled(1)).all;
				const first = await finishedExecution(main!, failed.id);
				log(`(e) first delivery: ${first.status}: ${itemError(first)}`);
				expect(first.status).toBe('error');
				expect(itemError(first)).toMatch(/n8n's database/);
				expect(itemError(first)).toMatch(/Nothing was sent/);
				expect(s.tally([id]).invoices).toBe(0);
				await s.deliver(id);
				const { all } = await s.settled(2);
				const second = await finishedExecution(main!, all[1].id);
				expect(second.status).toBe('success');
				expect(s.tally([id])).toEqual({ invoices: 1, duplicates: 0, lost: 0 });
			},
			15 * MINUTE,
		);

		test(
			'(d) a worker killed while its create is in flight: the next delivery fails as outcome unknown, 1 invoice',
			async () => {
				// Timeout 5 s and no retries: another worker waits 5 s + the 30 s margin for a key in flight.
				const s = await scenario('killed', { timeout: 5_000, maxRetryWait: 0 });
				const [id] = events('killed', 1);
				// The service holds this create 15 s, then creates the invoice (the client is gone by then).
				const slowMs = sandbox!.config().slowMs;
				sandbox!.configure({ slowMs: 15_000 });
				try {
					sandbox!.faultOnce({ bodyContains: `"description":"${id}"`, fault: 'slow' });
					const slowBefore = sandbox!.stats().faults.slow;
					const t = Date.now();
					await s.deliver(id);
					await until('holding the create', () => sandbox!.stats().faults.slow === slowBefore + 1);
					const [first] = await s.executions();
					const [ran] = workersThatRan(first.id);
					expect(ran).toBeDefined();
					const killed = workers[ran - 1];
					killed.child.kill('SIGKILL');
					await until('killed', () => killed.exited());
					await s.deliver(id);
					// The second delivery's execution (the killed one's stays as n8n left it).
					const second = await (async () => {
						for (;;) {
							const all = await s.executions();
							const next = all.find((e) => e.id !== first.id);
							if (next) return await finishedExecution(main!, next.id, 5 * MINUTE);
							await sleep(250);
						}
					})();
					timings.killed = Date.now() - t;
					// The held create finishes at the service (its invoice is made) before the count.
					await until(
						'done with the held create',
						() => sandbox!.stats().concurrency.current === 0,
					);
					log(
						`(d) ${JSON.stringify({ killedWorker: ran, second: second.status, secondRanOn: workersThatRan(second.id), error: itemError(second), invoices: s.tally([id]) })}`,
					);
					expect(second.status).toBe('error');
					expect(itemError(second)).toContain(`Idempotency Key "${id}" is unknown`);
					expect(s.tally([id]).invoices).toBe(1);
				} finally {
					sandbox!.configure({ slowMs });
					// Two workers again, for whatever runs after.
					const dead = workers.findIndex((w) => w.exited());
					if (dead >= 0) await startWorker(dead);
				}
			},
			15 * MINUTE,
		);
	},
);
