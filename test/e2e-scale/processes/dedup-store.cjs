// A process of its own over n8n's real processed-data store: n8n's DeduplicationHelper on n8n's database
// (@n8n/db's DbConnection, configured by the DB_* environment as n8n itself is), loaded from an installed n8n
// (argv[2]: its node_modules/n8n). Reads one JSON job on stdin, prints one JSON answer on stdout.
//   { "migrate": true }                       run n8n's migrations (creates processed_data)
//   { "pin": true }                           the store's behaviour the Idempotency Keys rely on
//   { "workflows": [ids] }                   makes workflows (processed_data rows reference one)
//   { "claim": { keys, workflowId, nodeId, code } }  claims through the package's RowLock + KeyStore
//   { "facts": { "prefix": "..." } }         test/support/store-facts.cjs's script over DeduplicationHelper
// PostgreSQL (DB_TYPE=postgresdb, DB_POSTGRESDB_*) or SQLite (DB_TYPE=sqlite: the file is
// <N8N_USER_FOLDER>/.n8n/database.sqlite); a job may combine migrate with another (one load of n8n).
'use strict';
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const n8nDir = process.argv[2];
const need = (name) => require(require.resolve(name, { paths: [n8nDir] }));
need('reflect-metadata');
const { Container } = need('@n8n/di');
const { DbConnection, WorkflowRepository } = need('@n8n/db');
const { DeduplicationHelper } = require(
	path.join(n8nDir, 'dist/deduplication/deduplication-helper.js'),
);
const { storeFacts, workflowIdsFor } = require('../../support/store-facts.cjs');

/** The helpers n8n-core gives a node, over n8n's own DeduplicationHelper. */
function helpersFor(helper, workflowId, nodeId) {
	const data = { workflow: { id: workflowId }, node: { id: nodeId, name: `node ${nodeId}` } };
	return {
		checkProcessedAndRecord: (items, scope, options) =>
			helper.checkProcessedAndRecord(items, scope, data, options),
		removeProcessed: (items, scope, options) => helper.removeProcessed(items, scope, data, options),
		clearAllProcessedItems: (scope, options) => helper.clearAllProcessedItems(scope, data, options),
		getProcessedDataCount: (scope, options) => helper.getProcessedDataCount(scope, data, options),
	};
}

/** processed_data.workflowId references a workflow: the workflows the jobs use are made first. */
async function ensureWorkflows(ids) {
	const repository = Container.get(WorkflowRepository);
	for (const id of ids) {
		if (await repository.findOneBy({ id })) continue;
		await repository.insert(
			repository.create({
				id,
				name: id,
				active: false,
				nodes: [],
				connections: {},
				versionId: randomUUID(),
			}),
		);
	}
}

async function pin(helper) {
	await ensureWorkflows([
		...Array.from({ length: 30 }, (_, trial) => `pin-race-${trial}`),
		'pin-rows',
	]);
	const entries = { mode: 'entries' };
	const facts = {};
	// Two first inserts of one row at the same instant: one answers new, the other fails on the primary key.
	let collisions = 0;
	let bothNew = 0;
	const errors = new Set();
	for (let trial = 0; trial < 30; trial++) {
		const a = helpersFor(helper, `pin-race-${trial}`, 'a');
		const b = helpersFor(new DeduplicationHelper(), `pin-race-${trial}`, 'b');
		const results = await Promise.allSettled([
			a.checkProcessedAndRecord(['token'], 'workflow', entries),
			b.checkProcessedAndRecord(['token'], 'workflow', entries),
		]);
		for (const r of results)
			if (r.status === 'rejected') {
				collisions++;
				errors.add(String(r.reason?.code ?? r.reason?.driverError?.code ?? r.reason?.message));
			}
		if (results.every((r) => r.status === 'fulfilled' && r.value.new.length === 1)) bothNew++;
	}
	facts.race = { collisions, bothNew, errors: [...errors] };
	// One row per workflow + context: scope node per node, scope workflow shared by the workflow's nodes.
	const one = helpersFor(helper, 'pin-rows', 'one');
	const two = helpersFor(helper, 'pin-rows', 'two');
	await one.checkProcessedAndRecord(['x', 'y'], 'node', entries);
	await one.checkProcessedAndRecord(['w'], 'workflow', entries);
	facts.rows = {
		nodeOne: await one.getProcessedDataCount('node', entries),
		nodeTwo: await two.getProcessedDataCount('node', entries),
		workflowSeenByTwo: await two.getProcessedDataCount('workflow', entries),
		wAgainByTwo: (await two.checkProcessedAndRecord(['w'], 'workflow', entries)).processed,
	};
	// clearAllProcessedItems deletes the row: the next check inserts it again (answers new).
	await two.clearAllProcessedItems('workflow', entries);
	facts.cleared = {
		count: await one.getProcessedDataCount('workflow', entries),
		wNewAgain: (await one.checkProcessedAndRecord(['w'], 'workflow', entries)).new,
		nodeRowKept: await one.getProcessedDataCount('node', entries),
	};
	// removeProcessed takes entries out; maxEntries keeps the newest.
	await one.removeProcessed(['x'], 'node', entries);
	await one.checkProcessedAndRecord(['a', 'b', 'c'], 'node', { mode: 'entries', maxEntries: 3 });
	facts.trim = {
		count: await one.getProcessedDataCount('node', entries),
		yForgotten: (
			await one.checkProcessedAndRecord(['y'], 'node', { mode: 'entries', maxEntries: 10 })
		).new,
	};
	return facts;
}

async function claim(helper, { keys, workflowId, nodeId, code, barrier, withoutLock }) {
	const { KeyStore } = require(path.join(code, 'keyStore.js'));
	const { RowLock } = require(path.join(code, 'rowLock.js'));
	const helpers = helpersFor(helper, workflowId, nodeId);
	// The control: the same store calls without the lock (the test shows it can see an erased key).
	const lock = withoutLock
		? { hold: async (prepare, work) => (await prepare(), await work(() => undefined)) }
		: new RowLock(workflowId, helpers);
	const store = new KeyStore(lock, () => undefined);
	const row = { scope: nodeId, helpers, historySize: 100000, codesLeftIn: new Map() };
	// Every process starts its claims at the same instant: each took its own time to load n8n (more than 15 s on
	// a busy machine), so each says it is ready and waits for the others (a file each in the barrier's folder).
	if (barrier) await meetAt(barrier);
	const request = { codes: [], expireFlight: false };
	const started = Date.now();
	const answers = await Promise.all(
		keys.map(async (key) => {
			const t = Date.now();
			const answer = await store.check(row, key, request);
			if (answer === 'new') await store.settle(row, key, 'created');
			return { key, answer, ms: Date.now() - t };
		}),
	);
	// As a node run does: the lock of the last writes given back before the process ends.
	await store.unlocked();
	return { answers, ms: Date.now() - started };
}

/** Waits until `count` processes have arrived in `dir` (each writes a file), polling every 5 ms. */
async function meetAt({ dir, count }) {
	fs.writeFileSync(path.join(dir, `${process.pid}`), '');
	while (fs.readdirSync(dir).length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function main() {
	let input = '';
	for await (const chunk of process.stdin) input += chunk;
	const job = JSON.parse(input);
	const db = Container.get(DbConnection);
	await db.init();
	if (job.migrate) await db.migrate();
	const helper = new DeduplicationHelper();
	let answer = { ok: true };
	if (job.pin) answer = await pin(helper);
	if (job.workflows) await ensureWorkflows(job.workflows);
	if (job.claim) answer = await claim(helper, job.claim);
	if (job.facts) {
		await ensureWorkflows(workflowIdsFor(job.facts.prefix));
		answer = await storeFacts(
			(workflowId, nodeId) => helpersFor(helper, workflowId, nodeId),
			job.facts.prefix,
		);
	}
	// n8n's migrations log to stdout: the answer is the last line.
	process.stdout.write(`\n${JSON.stringify(answer)}\n`);
	process.exit(0);
}
main().catch((error) => {
	process.stderr.write(String(error?.stack ?? error));
	process.exit(1);
});
