// The stand-ins of n8n's processed-data store held to n8n's own: test/support/store-model.ts (the simulation's
// query-by-query model) and test/support/harness/memory-deduplicator.ts (the in-process runs' store) must answer
// test/support/store-facts.cjs's script exactly as n8n's DeduplicationHelper does, for every supported n8n
// version, on PostgreSQL and on SQLite. The real side runs in a process of its own over the installed n8n
// (test/e2e-scale/processes/dedup-store.cjs: n8n's migrations, then the script); a difference fails the test,
// and the fix belongs in the stand-in (the facts are n8n's).
//
// What n8n needs for each database (read in the installed dist, @n8n/config's DatabaseConfig and @n8n/db's
// DbConnectionOptions; the same DeduplicationHelper source in 2.41.1 and 1.123.81):
// - PostgreSQL: DB_TYPE=postgresdb and DB_POSTGRESDB_HOST/PORT/DATABASE/USER/PASSWORD (test/support/postgres.ts).
//   Both versions share one server; each gets a schema of its own (DB_POSTGRESDB_SCHEMA), since one version's
//   migrations are not the other's.
// - SQLite: DB_TYPE=sqlite (the default) and nothing else: the file is DB_SQLITE_DATABASE (default
//   `database.sqlite`) resolved in the n8n folder, `<N8N_USER_FOLDER>/.n8n/` (N8N_USER_FOLDER, else HOME). Each
//   run gets a fresh user folder (its .n8n made first). 2.41.1 opens the file with its pooled driver
//   (`sqlite-pooled`, DB_SQLITE_POOL_SIZE default 3, WAL on); 1.123.81 with the legacy one (`sqlite`, one
//   connection), as DB_SQLITE_POOL_SIZE defaults to 0 there (WAL only with DB_SQLITE_ENABLE_WAL). The tables
//   come from n8n's migrations ({ migrate: true }).
// processed_data.workflowId references workflow_entity, so the job makes the script's workflows first.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { ICheckProcessedContextData } from 'n8n-workflow';

import { N8N_VERSIONS, REPO_ROOT, ensureN8nInstalled, n8nInstallDir } from '../../tools/n8n';
import { MemoryDeduplicator } from '../support/harness/memory-deduplicator';
import { startPostgres, type Postgres } from '../support/postgres';
import {
	storeFacts,
	workflowIdsFor,
	type FactHelpers,
	type StoreFacts,
} from '../support/store-facts.cjs';
import { StoreModel } from '../support/store-model';

const MINUTE = 60_000;
const OUT = path.join(REPO_ROOT, 'test-output', 'store-model');
const CHILD = path.join(__dirname, 'processes', 'dedup-store.cjs');
const DATABASES = ['postgres', 'sqlite'] as const;
type Database = (typeof DATABASES)[number];

let pg: Postgres;

beforeAll(async () => {
	await ensureN8nInstalled(N8N_VERSIONS);
	fs.rmSync(OUT, { recursive: true, force: true });
	fs.mkdirSync(OUT, { recursive: true });
	pg = await startPostgres();
}, 15 * MINUTE);
afterAll(async () => await pg?.close());

/** The script over n8n's DeduplicationHelper of `version` on `database` (fresh tables: n8n's migrations first). */
async function realFacts(version: string, database: Database, prefix: string): Promise<StoreFacts> {
	const name = `${version}-${database}`;
	const userFolder = path.join(OUT, name);
	fs.mkdirSync(path.join(userFolder, '.n8n'), { recursive: true });
	// Nothing of the caller's own n8n database settings may leak in.
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !key.startsWith('DB_')),
	);
	let dbEnv: Record<string, string> = { DB_TYPE: 'sqlite' };
	if (database === 'postgres') {
		const schema = `v${version.replace(/\./g, '_')}`;
		await pg.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
		dbEnv = { ...pg.env, DB_POSTGRESDB_SCHEMA: schema };
	}
	const n8nDir = path.join(n8nInstallDir(version), 'node_modules', 'n8n');
	const stdout = await new Promise<string>((resolve, reject) => {
		const child = execFile(
			process.execPath,
			[CHILD, n8nDir],
			{
				env: { ...env, ...dbEnv, N8N_USER_FOLDER: userFolder },
				maxBuffer: 64 * 1024 * 1024,
				timeout: 5 * MINUTE,
			},
			(error, out, stderr) => {
				fs.writeFileSync(path.join(OUT, `${name}.log`), `${out}\n${stderr}`);
				if (error) reject(new Error(`${error.message}\n${stderr}`));
				else resolve(out);
			},
		);
		child.stdin!.end(JSON.stringify({ migrate: true, facts: { prefix } }));
	});
	if (database === 'sqlite') {
		// The run used the SQLite file where n8n is documented to put it (and so not some other database).
		expect(fs.existsSync(path.join(userFolder, '.n8n', 'database.sqlite'))).toBe(true);
	}
	// n8n's migrations log to stdout: the answer is the last line.
	return JSON.parse(stdout.trim().split('\n').pop()!) as StoreFacts;
}

/** The node helpers over a MemoryDeduplicator, as test/workflow/idempotency-keys.test.ts's contextOf makes them. */
function memoryHelpers(memory: MemoryDeduplicator) {
	return (workflowId: string, nodeId: string): FactHelpers => {
		const data = {
			workflow: { id: workflowId, active: false },
			node: { id: nodeId },
		} as unknown as ICheckProcessedContextData;
		return {
			checkProcessedAndRecord: async (items, scope, options) =>
				await memory.checkProcessedAndRecord(items, scope, data, options),
			removeProcessed: async (items, scope, options) =>
				await memory.removeProcessed(items, scope, data, options),
			clearAllProcessedItems: async (scope) => await memory.clearAllProcessedItems(scope, data),
			getProcessedDataCount: async (scope, options) =>
				await memory.getProcessedDataCount(scope, data, options),
		};
	};
}

describe.each(N8N_VERSIONS)("n8n %s's processed-data store", (version) => {
	test.each(DATABASES)(
		'on %s: StoreModel and MemoryDeduplicator answer the script as DeduplicationHelper does',
		async (database) => {
			const prefix = `${version}-${database === 'postgres' ? 'pg' : 'sq'}`;
			const real = await realFacts(version, database, prefix);
			fs.writeFileSync(
				path.join(OUT, `${version}-${database}.json`),
				JSON.stringify(real, null, '\t'),
			);
			expect(real.workflowIds).toEqual(workflowIdsFor(prefix));
			// What the package's lock relies on, spelled out (so that a change in n8n names itself).
			expect(real.facts.absentRace).toMatchObject({
				outcomes: { new: 10, 'primary-key': 10 },
				codes: [database === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT'],
			});

			process.stderr.write(
				`n8n ${version} on ${database}: ${real.retries} race attempts made again (the calls did not overlap)\n`,
			);

			const model = new StoreModel({}, database);
			const modelRun = await storeFacts(
				(workflowId, nodeId) => model.helpersFor(workflowId, nodeId),
				prefix,
			);
			const memoryRun = await storeFacts(memoryHelpers(new MemoryDeduplicator(database)), prefix);
			// The stand-ins' calls always overlap in a race: no attempt made again.
			expect([modelRun.retries, memoryRun.retries]).toEqual([0, 0]);
			const { workflowIds, facts } = real;
			expect({ workflowIds: modelRun.workflowIds, facts: modelRun.facts }).toEqual({
				workflowIds,
				facts,
			});
			expect({ workflowIds: memoryRun.workflowIds, facts: memoryRun.facts }).toEqual({
				workflowIds,
				facts,
			});
		},
		5 * MINUTE,
	);
});
