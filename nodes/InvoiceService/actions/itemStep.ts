import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

import {
	type Claim,
	type ClaimResult,
	type IdempotencyKeys,
	unknownKeyError,
} from '../exactlyOnce/idempotencyKeys';
import { newResendCode, resendWayForward, withCode } from '../exactlyOnce/resendCodes';
import { fingerprintOf, type RecordedError, type RunRecord } from '../exactlyOnce/runRecord';
import type { NodeError, RunCounts } from '../exactlyOnce/runReport';
import { mayHaveActed } from '../transport/nodeError';
import type { ServiceClient } from '../transport/request';
import type { RunOptions } from './common.descriptions';
import { asNodeError, wordsOf } from './itemErrors';
import { itemParameter } from './itemParameter';
import { keyParameter } from './keys.descriptions';
import type { Operation, Prepared } from './operation';

/** What a run's items share: the operation, its client and options, and the exactly-once state. */
export interface StepRun {
	operation: Operation;
	/** "resource/operation": part of each request's fingerprint. */
	operationName: string;
	runOptions: RunOptions;
	client: ServiceClient;
	keys: IdempotencyKeys | undefined;
	/**
	 * Set when the keys are not the user's but the retry keys of a retried execution (router.ts, `retryKeys`): the
	 * id its retries share, and each item's key is `retry <family> <item index>`.
	 */
	retryFamily?: string;
	record: RunRecord;
	counts: RunCounts;
}

/**
 * How far ahead of the item being sent the Idempotency Keys are claimed: a run's claims go to n8n's database
 * together (one write for many items, not one each), as do the marks of the keys created meanwhile. The window is
 * about AHEAD_SECONDS of the run's pace (items per second since its first turn, counted over at least a second),
 * between CLAIM_AHEAD_MIN and CLAIM_AHEAD_MAX items, and never more than half the node's History Size (the row
 * keeps that many keys, in flight included): a fast run writes its keys in large batches, a slow one holds few keys
 * it has not sent yet.
 */
export const AHEAD_SECONDS = 2;
export const CLAIM_AHEAD_MIN = 20;
export const CLAIM_AHEAD_MAX = 1000;
/** How long keys claimed ahead are held without their item's turn (tests shorten them). */
export const aheadTiming = {
	/**
	 * A key claimed ahead whose item's turn has not come within this time is given back (the item claims it again
	 * at its turn): another process waiting for it waits at least 30 s (flightTiming.marginMs), and must find it
	 * sent or free, not held for items stuck behind a slow service.
	 */
	heldMs: 10_000,
	/** How often the keys claimed ahead are looked at for one held too long. */
	checkMs: 1_000,
};
/**
 * Created keys are marked together: with the next claims ahead, when half a window of them waits, or this long
 * after the first one (whichever comes first), and at the end of the run. A key of this run waited for by a later
 * item with the same key is marked within MARK_DELAY_MS.
 */
export const MARK_DELAY_MS = 500;

/** A key claimed ahead of its item's turn. */
interface ClaimedAhead {
	key: string;
	claim: Promise<ClaimResult>;
	/** When it was claimed (Date.now()). */
	at: number;
}

/** Where an item went: its output, or the Already Created output (its key created the record before). */
export type StepResult = { output: INodeExecutionData } | { alreadyCreated: INodeExecutionData };

/**
 * One item's way from its prepared request to its output, the same for every way an item comes back (n8n's
 * Retry On Fail, a retried execution, a repeated Idempotency Key): recall what an earlier try did → claim its
 * key → create → settle the key (created, unknown, or released) → record. It throws the item's error; the router
 * owns the loop and what an error does to the run.
 */
export class ItemStep {
	/** Items that failed again without a request (an unknown outcome): they do not stop the other items. */
	readonly notSentAgain = new Set<number>();
	/** Keys claimed ahead, by item, until the item's turn takes its claim. */
	private readonly claimedAhead = new Map<number, ClaimedAhead>();
	/** Items below this have had their keys claimed ahead (or need none). */
	private claimedUpTo = 0;
	/** Keys being marked created or given back: written while the run goes on, all done before the node returns. */
	private readonly settling: Array<Promise<void>> = [];
	/**
	 * Created keys not yet handed to the store (see MARK_DELAY_MS), and the timed flush due for them (its number;
	 * 0: none). A flush made earlier (with claims, or half a window) cancels the timed one.
	 */
	private readonly toMark: Claim[] = [];
	private markDue = 0;
	private markFlushes = 0;
	/** The run's pace: items whose keys had their turn, and when the first one did. */
	private turns = 0;
	private firstTurnAt = 0;
	/** Whether the keys claimed ahead are being looked at for one held too long (heldTooLong). */
	private watchingHeld = false;
	/** The resend codes of the items this run sent without knowing the outcome (given when the create failed). */
	private readonly codes = new Map<number, string>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly run: StepRun,
		private readonly itemCount: number,
	) {}

	async send(itemIndex: number, prepared: Prepared): Promise<StepResult> {
		const { record, counts, runOptions } = this.run;
		const recalled = record.recall(itemIndex);
		let resending: string | undefined;
		if (recalled && 'unknown' in recalled) {
			if (!runOptions.resendCodes.includes(recalled.code)) {
				counts.notResent++;
				this.notSentAgain.add(itemIndex);
				throw recordedError(this.context, recalled.unknown, recalled.code, itemIndex);
			}
			resending = recalled.code;
			record.resend(itemIndex);
		} else if (recalled) {
			// Created before: never created again, whatever changed; a changed request only earns a hint.
			const { fingerprint } = recalled;
			if (fingerprint && fingerprint !== fingerprintOf(this.run.operationName, prepared.body)) {
				counts.changed.push(itemIndex);
			}
			if (recalled.output) {
				counts.returned++;
				return { output: recalled.output };
			}
			counts.rebuilt++;
			return { output: await this.outputOf(prepared, recalled.created, itemIndex) };
		}
		const claimed = await this.claim(itemIndex);
		if (claimed && 'alreadyCreated' in claimed) return claimed;
		// Sent again: its code was listed (for its record, or for its key, left unknown by another execution).
		const code = resending ?? claimed?.resent;
		if (code) counts.resent.push({ itemIndex, code });
		return { output: await this.create(itemIndex, prepared, claimed?.claim) };
	}

	/**
	 * The item failed: when the service may have acted on it, its error names the outcome's resend code, and the
	 * record keeps both (never sent again unless that code is entered).
	 */
	failed(itemIndex: number, caught: unknown, error: NodeError): void {
		if (!mayHaveActed(caught)) return;
		const code = this.codes.get(itemIndex) ?? newResendCode();
		withCode(error, code);
		this.run.record.unknown(itemIndex, wordsOf(error), code);
	}

	/** The output this run returns for the item, kept for a later try in this process. */
	returned(itemIndex: number, output: INodeExecutionData): void {
		this.run.record.returned(itemIndex, output);
	}

	/**
	 * The item's turn is over: a key claimed ahead for it and not used (its input could not be read) is given
	 * back, so that nothing waits for it.
	 */
	async turnOver(itemIndex: number): Promise<void> {
		const ahead = this.claimedAhead.get(itemIndex);
		if (!ahead) return;
		this.claimedAhead.delete(itemIndex);
		await giveBack(ahead);
	}

	/** The run is over: every key it claimed is settled in n8n's database (unused claims given back). */
	async keysWritten(): Promise<void> {
		const unused = [...this.claimedAhead.values()];
		this.claimedAhead.clear();
		this.flushMarks();
		await Promise.all([...this.settling, ...unused.map(giveBack)]);
		await this.run.keys?.written();
	}

	/** A created key waits to be marked with others (MARK_DELAY_MS). */
	private markCreated(claim: Claim): void {
		this.toMark.push(claim);
		if (this.toMark.length >= this.aheadWindow() / 2) this.flushMarks();
		else if (!this.markDue) {
			const due = (this.markDue = ++this.markFlushes);
			void sleep(MARK_DELAY_MS).then(() => {
				if (this.markDue === due) this.flushMarks();
			});
		}
	}

	/** Hands the waiting created keys to the store at once: they go in one batch. */
	private flushMarks(): void {
		this.markDue = 0;
		for (const claim of this.toMark.splice(0)) {
			this.settling.push(claim.created().catch(() => undefined));
		}
	}

	/** How many items ahead keys are claimed now (AHEAD_SECONDS of the run's pace so far). */
	private aheadWindow(): number {
		const seconds = Math.max((Date.now() - this.firstTurnAt) / 1000, 1);
		const paced = Math.round((this.turns / seconds) * AHEAD_SECONDS);
		const kept = Math.max(1, Math.floor((this.run.keys?.historySize ?? Infinity) / 2));
		return Math.min(CLAIM_AHEAD_MAX, kept, Math.max(CLAIM_AHEAD_MIN, paced));
	}

	/**
	 * Claims the keys of the items from this one to a window ahead that will be sent (not those a retry returns or
	 * fails without a request, nor those whose key cannot be read: their turn says why), half a window before they
	 * are needed, with the marks waiting: the store takes what arrives together in one write.
	 */
	private claimAhead(itemIndex: number): void {
		const { keys, record, runOptions } = this.run;
		const window = this.aheadWindow();
		if (!keys || this.claimedUpTo - itemIndex > window / 2) return;
		const end = Math.min(this.itemCount, itemIndex + window);
		const at = Date.now();
		for (let index = Math.max(itemIndex, this.claimedUpTo); index < end; index++) {
			const recalled = record.recall(index);
			if (recalled && !('unknown' in recalled && runOptions.resendCodes.includes(recalled.code)))
				continue;
			let key: string | undefined;
			try {
				key = this.keyOf(index);
			} catch {
				continue;
			}
			if (key === undefined) continue;
			const claim = keys.claim(key, index, { resendCodes: runOptions.resendCodes });
			// Its item's turn reports a failure; until then it must not count as unhandled.
			claim.catch(() => undefined);
			this.claimedAhead.set(index, { key, claim, at });
		}
		this.claimedUpTo = end;
		this.flushMarks();
		void this.heldTooLong();
	}

	/**
	 * While keys are claimed ahead, gives back those held longer than aheadTiming.heldMs without their item's turn
	 * coming (the run stalled behind a slow service): their items claim them again at their turn.
	 */
	private async heldTooLong(): Promise<void> {
		if (this.watchingHeld) return;
		this.watchingHeld = true;
		try {
			while (this.claimedAhead.size > 0) {
				await sleep(aheadTiming.checkMs);
				const now = Date.now();
				// In the order they were claimed: the oldest first.
				for (const [index, ahead] of this.claimedAhead) {
					if (now - ahead.at < aheadTiming.heldMs) break;
					this.claimedAhead.delete(index);
					this.settling.push(giveBack(ahead));
				}
			}
		} finally {
			this.watchingHeld = false;
		}
	}

	/**
	 * The item's Idempotency Key (or its retry key); undefined without keys. Throws FieldError for a blank key:
	 * the option is set, and a blank key must not turn the check off unseen.
	 */
	private keyOf(itemIndex: number): string | undefined {
		const { keys, retryFamily } = this.run;
		if (retryFamily !== undefined) return `retry ${retryFamily} ${itemIndex}`;
		if (!keys) return undefined;
		const value = itemParameter(this.context, 'options.idempotencyKey', itemIndex, '');
		return keys.keyOf(value, () => keyParameter(this.context));
	}

	/** The item's key, claimed: undefined without a key; Already Created when it created the record before. */
	private async claim(
		itemIndex: number,
	): Promise<
		{ claim: Claim; resent?: string } | { alreadyCreated: INodeExecutionData } | undefined
	> {
		const { keys, counts, runOptions } = this.run;
		if (!keys) return undefined;
		if (this.turns++ === 0) this.firstTurnAt = Date.now();
		this.claimAhead(itemIndex);
		const ahead = this.claimedAhead.get(itemIndex);
		this.claimedAhead.delete(itemIndex);
		const key = ahead ? ahead.key : this.keyOf(itemIndex);
		if (key === undefined) return undefined;
		const found = await (ahead?.claim ??
			keys.claim(key, itemIndex, { resendCodes: runOptions.resendCodes }));
		const byAnotherRetry = this.run.retryFamily !== undefined;
		if (found.state === 'created' && byAnotherRetry) {
			// Done by another retry, whose execution holds the output: failed without a request, the others go on.
			counts.createdByAnotherRetry.push(itemIndex);
			this.notSentAgain.add(itemIndex);
			throw createdByAnotherRetryError(this.context, itemIndex);
		}
		if (found.state === 'created') {
			counts.alreadyCreated++;
			return { alreadyCreated: alreadyCreatedItem(key, itemIndex, found.where) };
		}
		if (found.state === 'unknown') {
			// Like an unknown outcome in the record: failed without a request, and the other items go on.
			counts.notResent++;
			this.notSentAgain.add(itemIndex);
			throw byAnotherRetry
				? unknownInAnotherRetryError(this.context, itemIndex, found.code)
				: unknownKeyError(this.context, key, itemIndex, found.code);
		}
		return { claim: found.claim, ...(found.resent ? { resent: found.resent } : {}) };
	}

	private async create(
		itemIndex: number,
		prepared: Prepared,
		claim: Claim | undefined,
	): Promise<INodeExecutionData> {
		const { operation, client, record } = this.run;
		let created: IDataObject;
		try {
			created = await operation.create.call(this.context, prepared, itemIndex, client);
		} catch (caught) {
			if (mayHaveActed(caught)) {
				// The outcome's resend code: the key keeps it, and so do the item's error and the record (failed()).
				const code = newResendCode();
				this.codes.set(itemIndex, code);
				await settleOrSay(claim, { unknown: code }, caught);
			} else {
				await settleOrSay(claim, 'release', caught);
			}
			throw asNodeError(this.context, caught, itemIndex);
		}
		// The record exists whatever the store says: if n8n's database cannot mark the key created, it stays in
		// flight, and a later delivery of the event fails as unknown (never sent twice). Marked while the run goes
		// on (the marks of many items go together), and done before the node returns (keysWritten).
		if (claim) this.markCreated(claim);
		record.created(itemIndex, prepared.body, created);
		return await this.outputOf(prepared, created, itemIndex);
	}

	/** The output item of a created record (the PDF downloaded, for an invoice that asks for it). */
	private async outputOf(
		prepared: Prepared,
		created: IDataObject,
		itemIndex: number,
	): Promise<INodeExecutionData> {
		const { operation, client } = this.run;
		const output = operation.outputOf
			? await operation.outputOf.call(this.context, prepared, created, itemIndex, client)
			: { json: created };
		return { ...output, pairedItem: { item: itemIndex } };
	}
}

/** A key claimed ahead and not used goes back; one that was not claimed (created, unknown, failed) stays. */
async function giveBack({ claim }: ClaimedAhead): Promise<void> {
	const found = await claim.catch(() => undefined);
	if (found?.state === 'new') await found.claim.release().catch(() => undefined);
}

/**
 * A create that certainly did not happen gives its key back, so that a re-delivered event is created then; one
 * that may have happened marks it unknown. If n8n's database cannot take the change, the error says what that
 * means.
 */
async function settleOrSay(
	claim: Claim | undefined,
	outcome: { unknown: string } | 'release',
	caught: unknown,
): Promise<void> {
	try {
		await (outcome === 'release' ? claim?.release() : claim?.unknown(outcome.unknown));
	} catch (storeError) {
		const error = caught as { description?: string | null };
		const said = `The Idempotency Key could not be ${outcome === 'release' ? 'released' : 'marked'} in n8n's database (${(storeError as Error).message}): a later delivery of this event waits for this one, then fails as an unknown outcome.`;
		error.description = [error.description, said].filter(Boolean).join(' ');
	}
}

/** An item whose key already created a record: it goes to Already Created, saying when. */
function alreadyCreatedItem(
	key: string,
	itemIndex: number,
	where: 'earlier execution' | 'this run',
): INodeExecutionData {
	const when = where === 'this run' ? 'earlier in this run' : 'in an earlier execution';
	return {
		json: {
			idempotencyKey: key,
			alreadyCreated: true,
			message: `Already created through this node ${when} (same Idempotency Key): not sent again.`,
		},
		pairedItem: { item: itemIndex },
	};
}

/** An item another retry of this failed execution created: not sent again, and where its output is. */
function createdByAnotherRetryError(context: IExecuteFunctions, itemIndex: number): NodeError {
	return new NodeOperationError(
		context.getNode(),
		`Item ${itemIndex}: another retry of this execution already created this item's record`,
		{
			itemIndex,
			description:
				"Not sent again, so that it is not created twice. This failed execution was retried more than once, and an earlier retry created this item: that retry's execution holds its output. Go on from that execution (retry it if it failed), not from this one.",
		},
	);
}

/**
 * An item another retry of this failed execution sent without an answer: not sent again, and the way on (`code`:
 * this run gave up waiting for that retry, and gave the outcome this resend code).
 */
function unknownInAnotherRetryError(
	context: IExecuteFunctions,
	itemIndex: number,
	code?: string,
): NodeError {
	const way =
		code === undefined
			? "That retry's error gives the item's resend code: check the service; if the record is not there, enter that code in Options → Resend Unknown Outcomes Of and retry that execution with the current workflow."
			: resendWayForward(code);
	return new NodeOperationError(
		context.getNode(),
		`Item ${itemIndex}: another retry of this execution sent this item, and its outcome is unknown: the service may or may not hold the record`,
		{
			itemIndex,
			description: `Not sent again, so that it is not created twice. ${way}`,
		},
	);
}

/** The error of an item whose outcome was unknown in an earlier try: said again, and not sent. */
function recordedError(
	context: IExecuteFunctions,
	{ message, description, httpCode }: RecordedError,
	code: string,
	itemIndex: number,
): NodeError {
	const wayForward = resendWayForward(code);
	return new NodeApiError(context.getNode(), { message } as never, {
		message,
		description: [
			// Its way forward said once, at the end.
			description?.replace(wayForward, '').trim(),
			`Not sent again: an earlier try of this node sent it, and the service may have carried it out. ${wayForward}`,
		]
			.filter(Boolean)
			.join(' '),
		...(httpCode ? { httpCode } : {}),
		itemIndex,
	});
}
