// n8n's processed-data store, in memory, for in-process runs (the real one is n8n's database: packages/cli
// deduplication-helper). Same semantics: one row per workflow and node, entries compared by MD5 of
// String(value), the oldest dropped beyond maxEntries; and the same weakness: a check reads the whole row and
// writes it back after a pause, so two checks that overlap both see a key as new and the last write wins; and
// the same one atomic step: the first write of a row is an INSERT, and a second INSERT fails on the primary key
// (PostgreSQL's 23505, or SQLite's SQLITE_CONSTRAINT); an UPDATE of a row deleted meanwhile changes nothing.
// As n8n's: the INSERT path answers `new` = the very array given; duplicates within one check are all new and all
// recorded; a removal takes out one occurrence per item; a row written in another mode (a Remove Duplicates
// node's "latest" modes, of which only the first write is kept here) fails a check in mode entries and counts 0.
// test/e2e-scale/store-model.test.ts holds it to n8n's DeduplicationHelper.
import { sleep } from 'n8n-workflow';
import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

import {
	LATEST_MODES,
	LATEST_REMOVE_ERROR,
	MODE_ERROR,
	hashOf,
	primaryKeyError,
} from '../store-model';

const ENTRIES: ICheckProcessedOptions = { mode: 'entries' };

export class MemoryDeduplicator implements IDataDeduplicator {
	/** The rows in mode entries: their hashes, oldest first. */
	readonly rows = new Map<string, string[]>();
	/** The rows written in a latest mode: that mode and the value kept. */
	readonly latestRows = new Map<string, { mode: string; value: DeduplicationItemTypes }>();
	/** How many checks were asked (to show that a key sent nothing to the service but did ask the store). */
	checks = 0;
	/** Called after a check's write (a test throws from it: the connection dropped after the commit). */
	failAfterWrite?: (scope: DeduplicationScope) => Promise<void>;

	/** `database` picks the primary key's error (PostgreSQL's 23505 or SQLite's SQLITE_CONSTRAINT). */
	constructor(private readonly database: 'postgres' | 'sqlite' = 'postgres') {}

	private rowOf(scope: DeduplicationScope, { workflow, node }: ICheckProcessedContextData): string {
		return `${workflow.id} ${scope === 'node' ? `n:${node?.id}` : ''}`;
	}

	private has(row: string): boolean {
		return this.rows.has(row) || this.latestRows.has(row);
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		{ mode, maxEntries }: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		if (scope === 'node') this.checks++; // the node's own row (not the lock's)
		const row = this.rowOf(scope, contextData);
		const existed = this.has(row);
		const rowMode = this.latestRows.get(row)?.mode ?? (existed ? 'entries' : undefined);
		const entries = [...(this.rows.get(row) ?? [])];
		if (existed && rowMode !== mode) throw new Error(MODE_ERROR);
		const latest = LATEST_MODES.includes(mode);
		if (latest && (existed || mode !== 'latestIncrementalKey'))
			throw new Error(`MemoryDeduplicator: this check in mode ${mode} is not modelled`);
		await sleep(5); // the database's read-then-write window
		if (!existed) {
			if (this.has(row)) throw primaryKeyError(this.database);
			if (latest) {
				const value = [...items].sort((a, b) => Number(a) - Number(b)).pop()!;
				this.latestRows.set(row, { mode, value });
			} else {
				const hashes = items.map(hashOf);
				this.rows.set(row, maxEntries ? hashes.slice(-maxEntries) : hashes);
			}
			await this.failAfterWrite?.(scope);
			// n8n's INSERT path answers with the array it was given.
			return { new: items, processed: [] };
		}
		const output: IDeduplicationOutput = { new: [], processed: [] };
		// Compared with the row as read: a duplicate within the items is new twice, and recorded twice.
		const held = new Set(entries);
		for (const item of items) {
			const hash = hashOf(item);
			if (held.has(hash)) {
				output.processed.push(item);
			} else {
				output.new.push(item);
				entries.push(hash);
			}
		}
		if (this.rows.has(row)) {
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
		{ mode }: ICheckProcessedOptions = ENTRIES,
	): Promise<void> {
		if (LATEST_MODES.includes(mode)) throw new Error(LATEST_REMOVE_ERROR);
		const row = this.rowOf(scope, contextData);
		if (!this.rows.has(row)) return;
		const entries = [...this.rows.get(row)!];
		for (const hash of items.map(hashOf)) {
			const index = entries.indexOf(hash); // one occurrence per item, as n8n's findIndex + splice
			if (index !== -1) entries.splice(index, 1);
		}
		await sleep(5);
		if (this.rows.has(row)) this.rows.set(row, entries);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		const row = this.rowOf(scope, contextData);
		this.rows.delete(row);
		this.latestRows.delete(row);
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		{ mode }: ICheckProcessedOptions = ENTRIES,
	): Promise<number> {
		// n8n counts a list of entries only: in mode entries, of a row written in mode entries.
		if (mode !== 'entries') return 0;
		return this.rows.get(this.rowOf(scope, contextData))?.length ?? 0;
	}

	/** Forgets every key (between tests). */
	clear(): void {
		this.rows.clear();
		this.latestRows.clear();
		this.checks = 0;
		this.failAfterWrite = undefined;
	}
}
