import type { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { Operation } from '../actions/operation';
import type { RunRecord } from './runRecord';

export type NodeError = NodeApiError | NodeOperationError;

/** What this run did instead of sending, for the hints and the stop report. */
export interface RunCounts {
	/** Items an earlier run of this node run created: returned, not sent (Retry On Fail, a retried execution). */
	earlier: number;
	/** Items an earlier run sent with an unknown outcome: failed again, not sent. */
	notResent: number;
	/** Items whose Idempotency Key created a record in an earlier execution: on Already Created, not sent. */
	alreadyCreated: number;
}

/** What the run did besides sending, in the user's words (execution hints). */
export function runHints({ earlier, notResent, alreadyCreated }: RunCounts): string[] {
	return [
		earlier > 0
			? `${earlier} item(s) were created in an earlier try of this node (Retry On Fail or Retry of the failed execution): their first output is returned and they were not sent again.`
			: '',
		notResent > 0
			? `${notResent} item(s) were not sent again on Retry On Fail or Retry of the failed execution: the service may already have carried them out (see their errors).`
			: '',
		alreadyCreated > 0
			? `${alreadyCreated} item(s) were already created through this node in an earlier execution or earlier in this run (same Idempotency Key): they went to the Already Created output and were not sent.`
			: '',
	].filter(Boolean);
}

export interface StoppedRun {
	failures: Array<{ error: NodeError; itemIndex: number }>;
	record: RunRecord;
	operation: Operation;
	/** The items this try reached. */
	handled: Set<number>;
	count: number;
	counts: RunCounts;
}

/**
 * When the run stops, the first failed item's error is thrown, and it says what else happened, whichever try of
 * the node run did it: which items were created (so a re-run can skip them), which may have been carried out,
 * which others failed in this try, and how many were not sent.
 */
export function withStopReport({
	failures,
	record,
	operation,
	handled,
	count,
	counts,
}: StoppedRun): NodeError {
	failures.sort((a, b) => a.itemIndex - b.itemIndex);
	const [{ error }, ...others] = failures;
	const failed = new Set(failures.map((failure) => failure.itemIndex));
	const keyRefused = (error as NodeApiError).httpCode === '401';
	const created: string[] = [];
	const mayHaveActed: number[] = [];
	const known = new Set<number>();
	for (const [index, recalled] of record.entries().sort(([a], [b]) => a - b)) {
		known.add(index);
		if ('created' in recalled) {
			const id = operation.createdId?.(recalled.created);
			created.push(`item ${index}${id ? ` (${id})` : ''}`);
		} else if (!failed.has(index)) {
			mayHaveActed.push(index);
		}
	}
	let notSent = 0;
	for (let index = 0; index < count; index++) {
		if (!handled.has(index) && !known.has(index)) notSent++;
	}
	// Every one is listed, however many: a re-run must be able to skip exactly these.
	if (
		created.length + others.length + mayHaveActed.length + notSent + counts.alreadyCreated ===
		0
	) {
		return error;
	}
	const report = [
		created.length
			? `Already created in this run before it stopped: ${created.join(', ')}. Skip these when you run again.`
			: 'Nothing was created in this run before it stopped.',
		mayHaveActed.length
			? `The service may have carried out item(s) ${mayHaveActed.join(', ')} (sent in an earlier try, no answer): check the service before running them again.`
			: '',
		...others.map((other) => `Item ${other.itemIndex} failed too: ${other.error.message}`),
		counts.alreadyCreated > 0
			? `${counts.alreadyCreated} item(s) were already created in an earlier execution (same Idempotency Key) and were not sent.`
			: '',
		notSent > 0
			? `${notSent} other item(s) were not sent${keyRefused ? ': the service refused the API key' : ''}.`
			: '',
	]
		.filter(Boolean)
		.join(' ');
	error.description = [error.description, report].filter(Boolean).join('\n\n');
	return error;
}
