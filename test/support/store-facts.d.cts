// Types of store-facts.cjs (plain CommonJS, so that a process over an installed n8n loads it as it is).
import type { DeduplicationMode } from 'n8n-workflow';

export interface FactHelpers {
	checkProcessedAndRecord(
		items: Array<string | number>,
		scope: 'node' | 'workflow',
		options: { mode: DeduplicationMode; maxEntries?: number },
	): Promise<{ new: unknown[]; processed: unknown[] }>;
	removeProcessed(
		items: Array<string | number>,
		scope: 'node' | 'workflow',
		options: { mode: DeduplicationMode },
	): Promise<void>;
	clearAllProcessedItems(
		scope: 'node' | 'workflow',
		options: { mode: DeduplicationMode },
	): Promise<void>;
	getProcessedDataCount(
		scope: 'node' | 'workflow',
		options: { mode: DeduplicationMode },
	): Promise<number>;
}

export interface StoreFacts {
	workflowIds: string[];
	facts: Record<string, unknown>;
	/** Race attempts made again because the calls did not overlap (the schedule's doing, not a fact). */
	retries: number;
}

export function storeFacts(
	makeHelpers: (workflowId: string, nodeId: string) => FactHelpers,
	prefix: string,
): Promise<StoreFacts>;
export function workflowIdsFor(prefix: string): string[];
export function errorFact(error: unknown): string;
