// n8n's processed-data store as a model, query by query, as packages/cli/src/deduplication/deduplication-helper.ts
// runs it on n8n's database: every helper call is one or two queries, each its own statement (no transaction):
//   checkProcessedAndRecord  SELECT the row, then INSERT it (absent: answers `new` = the very array it was given) or
//                            UPDATE it whole (present: the row as read plus the new hashes; a fresh answer object)
//   removeProcessed          SELECT, then UPDATE whole (nothing when absent)
//   clearAllProcessedItems   DELETE
//   getProcessedDataCount    SELECT (entries mode: the list's length; absent, empty or another mode: 0)
// An UPDATE of a row deleted since its SELECT changes nothing; an INSERT of a row inserted since fails on the primary
// key (PostgreSQL's 23505, or SQLite's SQLITE_CONSTRAINT); a row written in another mode fails the check with n8n's
// "incompatible setting" error (of the latest modes only the first write of latestIncrementalKey is modelled).
// Duplicates within one check's items are all new and all recorded (the row is compared as read); a removal takes
// out one occurrence per item. test/e2e-scale/store-model.test.ts holds this model to n8n's own DeduplicationHelper
// (2.41.1 and 1.123.81, on PostgreSQL and SQLite) with the same script (test/support/store-facts.cjs).
//
// `hooks` put the model on a schedule (the simulation, test/workflow/exactly-once-simulation.test.ts): each query
// waits for `beforeQuery` (a delay, a pause, or a failure before it runs) and, once it has run, for `afterQuery`
// (a failure there is a failure after the commit: the write stays, the caller sees an error).
import { createHash } from 'node:crypto';

export type Scope = 'node' | 'workflow';
export type QueryStep = 'select' | 'insert' | 'update' | 'delete';
export type HelperName =
	| 'checkProcessedAndRecord'
	| 'removeProcessed'
	| 'clearAllProcessedItems'
	| 'getProcessedDataCount';

export interface Query {
	/** Whose call it is (the simulation's process). */
	caller: string;
	helper: HelperName;
	step: QueryStep;
	/** The row: `<workflowId> <context>` (context '' for scope workflow, `n:<node id>` for scope node). */
	row: string;
}

export interface StoreHooks {
	beforeQuery?(query: Query): Promise<void>;
	/** The instant the query runs against the rows (before it), for a check of who may write. */
	onRun?(query: Query): void;
	afterQuery?(query: Query): Promise<void>;
}

interface Row {
	mode: string;
	data: string[] | number | string;
}

/** The hashes n8n keeps (MD5, base64), each computed once: the simulation hashes the same entries many times. */
const hashes = new Map<string, string>();
export function hashOf(value: unknown): string {
	const text = String(value);
	let hash = hashes.get(text);
	if (hash === undefined) {
		hash = createHash('md5').update(text).digest('base64');
		if (hashes.size < 100_000) hashes.set(text, hash);
	}
	return hash;
}

export function primaryKeyError(database: 'postgres' | 'sqlite'): Error {
	return database === 'postgres'
		? Object.assign(
				new Error('duplicate key value violates unique constraint "PK_processed_data"'),
				{
					code: '23505',
				},
			)
		: Object.assign(
				new Error(
					'SQLITE_CONSTRAINT: UNIQUE constraint failed: processed_data.workflowId, processed_data.context',
				),
				{ code: 'SQLITE_CONSTRAINT' },
			);
}

// n8n's DeduplicationError prefixes its message with "Deduplication Failed: ".
export const MODE_ERROR =
	'Deduplication Failed: Deduplication data was originally saved with an incompatible setting of the ‘Keep Items Where’ parameter. Try ’Clean Database’ operation to reset.';
export const LATEST_REMOVE_ERROR =
	'Deduplication Failed: Removing processed data is not possible in mode "latest"';
export const LATEST_MODES = ['latestIncrementalKey', 'latestDate'];

/**
 * The value n8n writes for a first check in mode latestIncrementalKey (the largest item). The package uses mode
 * entries only; the latest modes are here so far as a row of another mode matters (a Remove Duplicates node's
 * row): its first write. The rest of them (latestDate, a later check) the model refuses rather than guesses.
 */
function latestValue(items: unknown[], mode: string): Row['data'] {
	if (mode !== 'latestIncrementalKey' || items.some((item) => Number.isNaN(Number(item))))
		throw new Error(`StoreModel: mode ${mode} with ${JSON.stringify(items)} is not modelled`);
	return [...items].sort((a, b) => Number(a) - Number(b)).pop() as Row['data'];
}

export interface ModelHelpers {
	checkProcessedAndRecord(
		items: unknown[],
		scope: Scope,
		options: { mode: string; maxEntries?: number },
	): Promise<{ new: unknown[]; processed: unknown[] }>;
	removeProcessed(items: unknown[], scope: Scope, options: { mode: string }): Promise<void>;
	clearAllProcessedItems(scope: Scope, options?: { mode: string }): Promise<void>;
	getProcessedDataCount(scope: Scope, options: { mode: string }): Promise<number>;
}

export class StoreModel {
	readonly rows = new Map<string, Row>();
	/** Queries run, by step (a cost measure for the simulation's report). */
	readonly counts: Record<QueryStep, number> = { select: 0, insert: 0, update: 0, delete: 0 };

	constructor(
		private readonly hooks: StoreHooks = {},
		private readonly database: 'postgres' | 'sqlite' = 'postgres',
	) {}

	/** The helpers n8n-core gives a node of `workflowId` with id `nodeId`, for calls made by `caller`. */
	helpersFor(workflowId: string, nodeId: string, caller = 'main'): ModelHelpers {
		const rowOf = (scope: Scope) => `${workflowId} ${scope === 'node' ? `n:${nodeId}` : ''}`;
		const query = async <T>(
			helper: HelperName,
			step: QueryStep,
			row: string,
			run: () => T,
		): Promise<T> => {
			const info = { caller, helper, step, row };
			await this.hooks.beforeQuery?.(info);
			this.counts[step]++;
			this.hooks.onRun?.(info);
			const result = run();
			await this.hooks.afterQuery?.(info);
			return result;
		};
		const select = async (helper: HelperName, row: string) =>
			await query(helper, 'select', row, () => copy(this.rows.get(row)));
		const update = async (helper: HelperName, row: string, value: Row) =>
			await query(helper, 'update', row, () => {
				if (this.rows.has(row)) this.rows.set(row, value);
			});
		return {
			checkProcessedAndRecord: async (items, scope, { mode, maxEntries }) => {
				const row = rowOf(scope);
				const found = await select('checkProcessedAndRecord', row);
				if (found && found.mode !== mode) throw new Error(MODE_ERROR);
				const latest = LATEST_MODES.includes(mode);
				if (latest && found)
					throw new Error(`StoreModel: a later check in mode ${mode} is not modelled`);
				const hashes = items.map(hashOf);
				if (!found) {
					if (maxEntries) hashes.splice(0, hashes.length - maxEntries);
					const data = latest ? latestValue(items, mode) : hashes;
					await query('checkProcessedAndRecord', 'insert', row, () => {
						if (this.rows.has(row)) throw primaryKeyError(this.database);
						this.rows.set(row, { mode, data });
					});
					return { new: items, processed: [] };
				}
				const answer = { new: [] as unknown[], processed: [] as unknown[] };
				if (!Array.isArray(found.data)) return answer;
				const data = found.data;
				const held = new Set(data);
				hashes.forEach((hash, index) => {
					if (held.has(hash)) answer.processed.push(items[index]);
					else {
						answer.new.push(items[index]);
						data.push(hash);
					}
				});
				if (maxEntries) data.splice(0, data.length - maxEntries);
				await update('checkProcessedAndRecord', row, found);
				return answer;
			},
			removeProcessed: async (items, scope, { mode }) => {
				// n8n refuses before any query.
				if (LATEST_MODES.includes(mode)) throw new Error(LATEST_REMOVE_ERROR);
				const row = rowOf(scope);
				const found = await select('removeProcessed', row);
				if (!found || !Array.isArray(found.data)) return;
				const data = found.data;
				for (const hash of items.map(hashOf)) {
					const index = data.indexOf(hash);
					if (index !== -1) data.splice(index, 1);
				}
				await update('removeProcessed', row, found);
			},
			clearAllProcessedItems: async (scope) => {
				const row = rowOf(scope);
				await query('clearAllProcessedItems', 'delete', row, () => this.rows.delete(row));
			},
			getProcessedDataCount: async (scope, { mode }) => {
				const found = await select('getProcessedDataCount', rowOf(scope));
				return mode === 'entries' && found && Array.isArray(found.data) ? found.data.length : 0;
			},
		};
	}
}

function copy(row: Row | undefined): Row | undefined {
	return row && { mode: row.mode, data: Array.isArray(row.data) ? [...row.data] : row.data };
}
