import type { IDataObject, NodeApiError, NodeOperationError } from 'n8n-workflow';

import { capitalized } from '../helpers/title';
import { EACH_WAY_FORWARD, resendWayForward } from './resendCodes';
import type { KeysNotWritten } from './runClaims';
import type { RunRecord } from './runRecord';

export type NodeError = NodeApiError | NodeOperationError;

/** What this run did instead of sending, for the hints and the stop report. */
export interface RunCounts {
	/** Items an earlier try of this node run created, whose output from that try this process still held. */
	returned: number;
	/** Items an earlier try created, their output rebuilt from the record (a retried execution). */
	rebuilt: number;
	/** Of those, the items whose request is not the one they were created with (an edit, other input). */
	changed: number[];
	/** Items an earlier run sent with an unknown outcome: failed again, not sent. */
	notResent: number;
	/**
	 * Items an earlier run (or another execution, for a key) sent with an unknown outcome, sent again because
	 * Options → Resend Unknown Outcomes Of lists their code.
	 */
	resent: Array<{ itemIndex: number; code: string }>;
	/** The codes Options → Resend Unknown Outcomes Of lists. */
	listedCodes: string[];
	/** Items whose Idempotency Key created a record in an earlier execution: on Already Created, not sent. */
	alreadyCreated: number;
	/** Items another retry of this failed execution created (its retry keys): failed, not sent. */
	createdByAnotherRetry: number[];
	/** Items whose Idempotency Key n8n's database did not take at the end (runClaims.ts). */
	keysNotWritten: KeysNotWritten;
}

export const noCounts = (listedCodes: string[] = []): RunCounts => ({
	returned: 0,
	rebuilt: 0,
	changed: [],
	notResent: 0,
	resent: [],
	listedCodes,
	alreadyCreated: 0,
	createdByAnotherRetry: [],
	keysNotWritten: { notMarked: [], notGivenBack: [], leftInFlight: [], expiredUnsent: [] },
});

/** How many entries a report lists of one kind; the rest are counted. */
export const LISTED = 50;

/** "a, b, c" for up to LISTED entries, then "and N more". */
export function listed(entries: string[]): string {
	const more = entries.length - LISTED;
	return more > 0 ? `${entries.slice(0, LISTED).join(', ')} and ${more} more` : entries.join(', ');
}

/**
 * An item as every message names it: its index counted from 0, as n8n's own item errors do (NodeOperationError's
 * itemIndex, shown as "Item Index" in the error panel). "Line" is kept for invoice lines.
 */
export const itemName = (itemIndex: number) => `item ${itemIndex}`;

const EARLIER =
	'created in an earlier try of this node (Retry On Fail or Retry of the failed execution)';

/** What the run did besides sending, in the user's words (execution hints). */
export function runHints(counts: RunCounts): string[] {
	const { returned, rebuilt, changed, notResent, resent, alreadyCreated, createdByAnotherRetry } =
		counts;
	return [
		returned > 0
			? `${returned} item(s) were ${EARLIER} and were not sent again: the output that try made is returned.`
			: '',
		rebuilt > 0
			? `${rebuilt} item(s) were ${EARLIER} and were not sent again: their output is rebuilt from the service's answer saved with the execution (a PDF, if asked for, is downloaded again).`
			: '',
		changed.length > 0
			? `The request of ${listed(changed.map(itemName))} changed since they were created (the node or its input was edited): they were not created again, and their output is the record created then. To create them anew, run the workflow again instead of retrying it.`
			: '',
		notResent > 0
			? `${notResent} item(s) were not sent again: an earlier try sent them and their outcome is unknown (their errors give each its resend code). ${EACH_WAY_FORWARD}`
			: '',
		resentSentence(resent),
		unmatchedSentence(counts),
		alreadyCreated > 0
			? `${alreadyCreated} item(s) were already created through this node in an earlier execution or earlier in this run (same Idempotency Key): they went to the Already Created output and were not sent.`
			: '',
		createdByAnotherRetry.length > 0 ? byAnotherRetry(createdByAnotherRetry) : '',
	].filter(Boolean);
}

/**
 * The keys n8n's database did not take at the end of the run: what a later delivery of those events meets, and
 * what to do.
 */
export function keyWarnings({
	keysNotWritten: { notMarked, notGivenBack, leftInFlight, expiredUnsent },
}: RunCounts): string[] {
	const sorted = (items: number[]) => listed([...items].sort((a, b) => a - b).map(itemName));
	return [
		notMarked.length > 0
			? `n8n's database could not mark the Idempotency Key of ${sorted(notMarked)} as created (their records were created): a later delivery of those events waits for them, then fails as an unknown outcome instead of going to Already Created, and is never sent twice. Check that n8n's database is reachable; those events need nothing more.`
			: '',
		notGivenBack.length > 0
			? `n8n's database could not record that nothing was created for ${sorted(notGivenBack)}: a later delivery of those events waits, then fails as outcome unknown. Check that n8n's database is reachable, then resend them with the resend code their error gives (their records are not in the service).`
			: '',
		leftInFlight.length > 0
			? `n8n's database failed while recording the Idempotency Key of ${sorted(leftInFlight)} (not sent): a later delivery of those events waits, then fails as outcome unknown, and is never sent twice. Check that n8n's database is reachable; what this run said of those items stays true.`
			: '',
		...expiredUnsent.map(
			({ itemIndex, code }) =>
				`${capitalized(itemName(itemIndex))} was not sent (the run ended before its turn, or its input was refused), and another execution was still sending with its Idempotency Key when this run's wait ended: a later delivery of that event fails as outcome unknown. ${resendWayForward(code)}`,
		),
	].filter(Boolean);
}

/** What Options → Resend Unknown Outcomes Of sent again, by item and code. */
function resentSentence(resent: RunCounts['resent']): string {
	if (resent.length === 0) return '';
	const sorted = [...resent].sort((a, b) => a.itemIndex - b.itemIndex);
	return `${resent.length} item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: ${listed(sorted.map(({ itemIndex, code }) => `${itemName(itemIndex)} (code ${code})`))}. Each code is now used: it sends nothing again, and the option can be cleared.`;
}

/** The listed codes that named no unknown outcome of this run (a notice: the run is not stopped for them). */
export function unmatchedCodes({ listedCodes, resent }: RunCounts): string[] {
	const used = new Set(resent.map(({ code }) => code));
	return listedCodes.filter((code) => !used.has(code));
}

function unmatchedSentence(counts: RunCounts): string {
	const unmatched = unmatchedCodes(counts);
	if (unmatched.length === 0) return '';
	return `Options → Resend Unknown Outcomes Of: ${listed(unmatched)} named no unknown outcome of this run, so nothing was sent again for ${unmatched.length === 1 ? 'it' : 'them'} (a code is used once, and a later unknown outcome gets a code of its own). Clear the option, or enter the code its error gives.`;
}

/** The items another retry of this failed execution created, and where their outputs are. */
function byAnotherRetry(items: number[]): string {
	return `Created by another retry of this execution, not sent again: ${listed([...items].sort((a, b) => a - b).map(itemName))}. That retry's execution has their output: go on from it (retry it if it failed), not from this one.`;
}

export interface Failed {
	error: NodeError;
	itemIndex: number;
	/** A resend code the item's error alone gives (this run gave up waiting for its key): the report lists it. */
	code?: string;
}

export interface StoppedRun {
	/** Items that failed in this try (the run stopped at the first). */
	failures: Failed[];
	/** Items not sent again in this try because their outcome was unknown (the run went on past them). */
	notResent: Failed[];
	record: RunRecord;
	/** The created record's id in its output json (the operation's `createdId`), to name created items by. */
	createdId?: (json: IDataObject) => string | undefined;
	/** The items this try reached. */
	handled: Set<number>;
	count: number;
	counts: RunCounts;
}

/** The other items that failed in this try: the first LISTED by their message, the rest counted. */
function failedToo(others: Failed[]): string[] {
	const named = others
		.slice(0, LISTED)
		.map((other) => `Item ${other.itemIndex} failed too: ${other.error.message}`);
	const more = others.length - LISTED;
	return more > 0 ? [...named, `${more} more item(s) failed too.`] : named;
}

/** Items in order of their index. */
const byIndex = (a: { itemIndex: number }, b: { itemIndex: number }) => a.itemIndex - b.itemIndex;

/**
 * What the run's items did that the report lists: the items created (named by their record's id), the items with
 * an unknown outcome and their resend codes (the record's, then the codes only an item's error gives: every one must
 * reach the user, and n8n keeps the thrown error alone), and which items either names.
 */
function itemsToList({ record, createdId, failures, notResent }: StoppedRun) {
	const created: string[] = [];
	const unknownCodes: Array<{ itemIndex: number; code: string }> = [];
	const known = new Set<number>();
	// A code this run gave an item's key is newer than the record's (whose code the run's claim used up).
	const given = new Map(
		[...failures, ...notResent].flatMap(({ itemIndex, code }) =>
			code === undefined ? [] : [[itemIndex, code] as const],
		),
	);
	for (const [index, recalled] of record.entries().sort(([a], [b]) => a - b)) {
		known.add(index);
		if ('created' in recalled) {
			const id = createdId?.(recalled.created);
			created.push(`item ${index}${id ? ` (${id})` : ''}`);
		} else unknownCodes.push({ itemIndex: index, code: given.get(index) ?? recalled.code });
	}
	for (const { itemIndex, code } of [...failures, ...notResent].sort(byIndex)) {
		if (code === undefined || known.has(itemIndex)) continue;
		known.add(itemIndex);
		unknownCodes.push({ itemIndex, code });
	}
	unknownCodes.sort(byIndex);
	return { created, unknownCodes, known };
}

/**
 * When the run stops, one error is thrown (the first failure of this try, else the first item not sent again),
 * and it says what else happened, whichever try of the node run did it: which items were created, which have an
 * unknown outcome, which others failed in this try, and how many were not sent. Each list names at most LISTED
 * items, then counts the rest, so the report stays readable for any number of items; but every unknown item with
 * its code, never cut short: a code left out is an event no one can resend.
 */
export function withStopReport(run: StoppedRun): NodeError {
	const { failures, notResent, handled, count, counts } = run;
	failures.sort(byIndex);
	notResent.sort(byIndex);
	const [{ error, itemIndex: thrownIndex }] = failures.length > 0 ? failures : notResent;
	const keyRefused = (error as NodeApiError).httpCode === '401';
	const { created, unknownCodes, known } = itemsToList(run);
	const unknown = unknownCodes.map(
		({ itemIndex, code }) => `${itemName(itemIndex)} (code ${code})`,
	);
	const codes = unknownCodes.map(({ code }) => code);
	const others = failures.filter(
		({ itemIndex }) => itemIndex !== thrownIndex && !known.has(itemIndex),
	);
	const notSent = Array.from({ length: count }, (_, index) => index).filter(
		(index) => !handled.has(index) && !known.has(index),
	).length;
	const byOthers = counts.createdByAnotherRetry.filter((index) => index !== thrownIndex);
	// A code that named nothing is only known once every item was reached.
	const unmatched = notSent === 0 ? unmatchedSentence(counts) : '';
	const warnings = keyWarnings(counts);
	const thrownAlone =
		warnings.length === 0 &&
		created.length +
			others.length +
			notSent +
			counts.alreadyCreated +
			byOthers.length +
			counts.resent.length +
			unmatched.length ===
			0 &&
		unknown.length <= (known.has(thrownIndex) ? 1 : 0);
	if (thrownAlone) return error;
	const report = [
		created.length
			? `Already created in this run before it stopped: ${listed(created)}. Retry of this execution returns them without creating them again.`
			: 'Nothing was created in this run before it stopped.',
		unknown.length
			? `Outcome unknown, not sent again: ${unknown.join(', ')}. ${codes.length === 1 ? resendWayForward(codes[0]) : EACH_WAY_FORWARD}`
			: '',
		resentSentence(counts.resent),
		unmatched,
		...failedToo(others),
		counts.alreadyCreated > 0
			? `${counts.alreadyCreated} item(s) were already created in an earlier execution (same Idempotency Key) and were not sent.`
			: '',
		counts.createdByAnotherRetry.length > 0 ? byAnotherRetry(counts.createdByAnotherRetry) : '',
		notSent > 0
			? keyRefused
				? `${notSent} other item(s) were not sent: the service refused the API key.`
				: `${notSent} other item(s) were not sent: once the cause above is dealt with, Retry of this execution sends them.`
			: '',
		...warnings,
	]
		.filter(Boolean)
		.join(' ');
	error.description = [error.description, report].filter(Boolean).join('\n\n');
	return error;
}
