// n8n's processed-data store, in memory, for in-process runs (the real one is n8n's database: packages/cli
// deduplication-helper). Same semantics: one row per workflow and node, entries compared by MD5 of
// String(value), the oldest dropped beyond maxEntries; and the same weakness: a check reads the whole row and
// writes it back after a pause, so two checks that overlap both see a key as new and the last write wins; and
// the same one atomic step: the first write of a row is an INSERT, and a second INSERT fails on the primary key
// (PostgreSQL's 23505); an UPDATE of a row deleted meanwhile changes nothing.
import { createHash } from 'node:crypto';

import { sleep } from 'n8n-workflow';
import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

const hashOf = (value: DeduplicationItemTypes) =>
	createHash('md5').update(String(value)).digest('base64');

export class MemoryDeduplicator implements IDataDeduplicator {
	readonly rows = new Map<string, string[]>();
	/** How many checks were asked (to show that a key sent nothing to the service but did ask the store). */
	checks = 0;
	/** Called after a check's write (a test throws from it: the connection dropped after the commit). */
	failAfterWrite?: (scope: DeduplicationScope) => Promise<void>;

	private rowOf(scope: DeduplicationScope, { workflow, node }: ICheckProcessedContextData): string {
		return `${workflow.id} ${scope === 'node' ? `n:${node?.id}` : ''}`;
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		{ maxEntries }: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		if (scope === 'node') this.checks++; // the node's own row (not the lock's)
		const row = this.rowOf(scope, contextData);
		const existed = this.rows.has(row);
		const entries = [...(this.rows.get(row) ?? [])];
		await sleep(5); // the database's read-then-write window
		if (!existed && this.rows.has(row)) {
			throw Object.assign(
				new Error('duplicate key value violates unique constraint "PK_processed_data"'),
				{ code: '23505' },
			);
		}
		const output: IDeduplicationOutput = { new: [], processed: [] };
		for (const item of items) {
			const hash = hashOf(item);
			if (entries.includes(hash)) {
				output.processed.push(item);
			} else {
				output.new.push(item);
				entries.push(hash);
			}
		}
		if (!existed || this.rows.has(row)) {
			this.rows.set(row, maxEntries ? entries.slice(-maxEntries) : entries);
		}
		await this.failAfterWrite?.(scope);
		// As n8n: an INSERT answers with the very array it was given (the lock tells its INSERT by it).
		return existed ? output : { new: items, processed: [] };
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const row = this.rowOf(scope, contextData);
		if (!this.rows.has(row)) return;
		const remove = new Set(items.map(hashOf));
		const entries = (this.rows.get(row) ?? []).filter((hash) => !remove.has(hash));
		await sleep(5);
		if (this.rows.has(row)) this.rows.set(row, entries);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		this.rows.delete(this.rowOf(scope, contextData));
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<number> {
		return this.rows.get(this.rowOf(scope, contextData))?.length ?? 0;
	}

	/** Forgets every key (between tests). */
	clear(): void {
		this.rows.clear();
		this.checks = 0;
		this.failAfterWrite = undefined;
	}
}
