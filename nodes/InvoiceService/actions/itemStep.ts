import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { type Claim, type IdempotencyKeys, unknownKeyError } from '../exactlyOnce/idempotencyKeys';
import { newResendCode, resendWayForward, withCode } from '../exactlyOnce/resendCodes';
import { isTooLate } from '../exactlyOnce/lockErrors';
import { RunClaims } from '../exactlyOnce/runClaims';
import { fingerprintOf, type RecordedError, type RunRecord } from '../exactlyOnce/runRecord';
import type { Failed, NodeError, RunCounts } from '../exactlyOnce/runReport';
import { mayHaveActed } from '../transport/nodeError';
import type { ServiceClient } from '../transport/request';
import type { RunOptions } from './common.descriptions';
import { asNodeError, errorItem, wordsOf } from './itemErrors';
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

/** Where an item went: its output, or the Already Created output (its key created the record before). */
export type StepResult = { output: INodeExecutionData } | { alreadyCreated: INodeExecutionData };

/** Where a run's item turns put what they give, by item (the router builds the node's outputs and report from it). */
export interface RunTurns {
	results: Array<INodeExecutionData | undefined>;
	alreadyCreated: Array<INodeExecutionData | undefined>;
	/** Items that failed: the run stops. */
	failures: Failed[];
	/** Items failed again without a request (unknown outcome): they do not stop the other items. */
	notResent: Failed[];
}

/**
 * One item's way from its prepared request to its output, the same for every way an item comes back (n8n's
 * Retry On Fail, a retried execution, a repeated Idempotency Key): recall what an earlier try did → claim its
 * key → create → settle the key (created, unknown, or given back) → record. Its `turn` puts the item's output or
 * error where the run's outputs are made from; the router owns the loop and what an error does to the run.
 */
export class ItemStep {
	/** Items that failed again without a request (an unknown outcome): they do not stop the other items. */
	private readonly notSentAgain = new Set<number>();
	/** The run's keys, claimed ahead and marked in batches (none without keys). */
	private readonly claims?: RunClaims;
	/** The resend codes of the items this run sent without knowing the outcome (given when the create failed). */
	private readonly codes = new Map<number, string>();
	/**
	 * The resend codes this run gave keys it gave up waiting for (another execution's send): only in the item's
	 * error, so the stop report lists them all (n8n keeps one thrown error a run, issue 51).
	 */
	private readonly givenUpCodes = new Map<number, string>();
	/**
	 * Items whose record the service created in this try: a later failure of theirs (the PDF download) is no unknown
	 * outcome, and gets no resend code (the record is there).
	 */
	private readonly createdHere = new Set<number>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly run: StepRun,
		itemCount: number,
	) {
		const { keys, record, runOptions } = run;
		if (!keys) return;
		this.claims = new RunClaims(keys, {
			itemCount,
			resendCodes: runOptions.resendCodes,
			sends: (index) => {
				const recalled = record.recall(index);
				return (
					!recalled || ('unknown' in recalled && runOptions.resendCodes.includes(recalled.code))
				);
			},
			keyOf: (index) => this.itemKey(index),
		});
	}

	private async send(itemIndex: number, prepared: Prepared): Promise<StepResult> {
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
		const claimed = await this.keyState(itemIndex);
		if (claimed && 'alreadyCreated' in claimed) return claimed;
		// Sent again: its code was listed (for its record, or for its key, left unknown by another execution).
		const code = resending ?? claimed?.resent;
		if (code) counts.resent.push({ itemIndex, code });
		return { output: await this.create(itemIndex, prepared, claimed?.claim) };
	}

	/**
	 * One item's whole turn, as the router's loop gives it (`take`: its prepared request, or its preparation's error):
	 * sent, its output or error put in `turns` (an error item under Continue), its unused key claimed ahead given back.
	 */
	async turn(
		itemIndex: number,
		take: () => Prepared,
		turns: RunTurns,
		continueOnFail: boolean,
	): Promise<void> {
		try {
			// A preparation error surfaces here, at the item's turn, exactly as if it were prepared now.
			const result = await this.send(itemIndex, take());
			if ('alreadyCreated' in result) {
				turns.alreadyCreated[itemIndex] = result.alreadyCreated;
				return;
			}
			turns.results[itemIndex] = result.output;
			this.returned(itemIndex, result.output);
		} catch (caught) {
			const error = asNodeError(this.context, caught, itemIndex);
			this.failed(itemIndex, caught, error);
			if (continueOnFail) {
				turns.results[itemIndex] = errorItem(error, itemIndex);
			} else {
				const failed = { error, itemIndex, code: this.givenUpCodes.get(itemIndex) };
				(this.notSentAgain.has(itemIndex) ? turns.notResent : turns.failures).push(failed);
			}
		} finally {
			await this.turnOver(itemIndex);
		}
	}

	/**
	 * The item failed: when the service may have acted on it, its error names the outcome's resend code, and the
	 * record keeps both (never sent again unless that code is entered).
	 */
	private failed(itemIndex: number, caught: unknown, error: NodeError): void {
		if (!mayHaveActed(caught) || this.createdHere.has(itemIndex)) return;
		const code = this.codes.get(itemIndex) ?? newResendCode();
		withCode(error, code);
		this.run.record.unknown(itemIndex, wordsOf(error), code);
	}

	/** The output this run returns for the item, kept for a later try in this process. */
	private returned(itemIndex: number, output: INodeExecutionData): void {
		this.run.record.returned(itemIndex, output);
	}

	/** The item's turn is over: a key claimed ahead for it and not used is given back. */
	private async turnOver(itemIndex: number): Promise<void> {
		await this.claims?.turnOver(itemIndex);
	}

	/**
	 * The run is over: every key it claimed is settled in n8n's database (unused claims given back); the items
	 * whose key n8n's database did not take go to the run's hints.
	 */
	async keysWritten(): Promise<void> {
		if (!this.claims) return;
		const { notMarked, notGivenBack, leftInFlight, expiredUnsent } = await this.claims.written();
		const counted = this.run.counts.keysNotWritten;
		counted.notMarked.push(...notMarked);
		counted.notGivenBack.push(...notGivenBack);
		counted.leftInFlight.push(...leftInFlight);
		counted.expiredUnsent.push(...expiredUnsent);
		// An item the record keeps as unknown whose key got a new code: its old code is used (seed 63717).
		for (const { itemIndex, code } of expiredUnsent) this.run.record.recode(itemIndex, code);
	}

	/**
	 * The item's Idempotency Key (or its retry key); undefined without keys. Throws FieldError for a blank key:
	 * the option is set, and a blank key must not turn the check off unseen.
	 */
	private itemKey(itemIndex: number): string {
		const { keys, retryFamily } = this.run;
		if (retryFamily !== undefined) return `retry ${retryFamily} ${itemIndex}`;
		if (!keys) throw new Error('No Idempotency Keys in this run');
		const value = itemParameter(this.context, 'options.idempotencyKey', itemIndex, '');
		return keys.readKey(value, () => keyParameter(this.context));
	}

	/** The item's key, claimed: undefined without a key; Already Created when it created the record before. */
	private async keyState(
		itemIndex: number,
	): Promise<
		{ claim: Claim; resent?: string } | { alreadyCreated: INodeExecutionData } | undefined
	> {
		const { counts } = this.run;
		if (!this.claims) return undefined;
		const { key, found } = await this.claims.take(itemIndex);
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
			if (found.code !== undefined) this.givenUpCodes.set(itemIndex, found.code);
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
				await settleOrSay(claim, 'giveBack', caught);
			}
			throw asNodeError(this.context, caught, itemIndex);
		}
		// The record exists whatever the store says: if n8n's database cannot mark the key created, it stays in
		// flight, and a later delivery of the event fails as unknown (never sent twice). Marked while the run goes
		// on (the marks of many items go together), and done before the node returns (keysWritten).
		this.createdHere.add(itemIndex);
		if (claim) this.claims?.markCreated(itemIndex, claim);
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

/**
 * A create that certainly did not happen gives its key back, so that a re-delivered event is created then; one
 * that may have happened marks it unknown. If n8n's database cannot take the change, the error says what that
 * means.
 */
async function settleOrSay(
	claim: Claim | undefined,
	outcome: { unknown: string } | 'giveBack',
	caught: unknown,
): Promise<void> {
	try {
		await (outcome === 'giveBack' ? claim?.giveBack() : claim?.unknown(outcome.unknown));
	} catch (storeError) {
		const error = caught as { description?: string | null };
		const why = (storeError as Error).message;
		// Too late: certainly not written, so the code above is in no row. Else the mark may have been written.
		const said =
			outcome === 'giveBack'
				? `n8n's database could not record that nothing was created for this Idempotency Key (${why}): a later delivery of this event waits for this one, then fails as outcome unknown.`
				: isTooLate(storeError)
					? `The Idempotency Key could not be marked in n8n's database (${why}): a later delivery of this event waits for this one, then fails as an unknown outcome with a resend code of its own; enter that one, not the one above.`
					: `The Idempotency Key may not have been marked in n8n's database (${why}): a later delivery of this event either fails as an unknown outcome sent by this execution (then enter the code above) or waits for this one, then fails with a resend code of its own (then enter that one).`;
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
				"Not sent again, so that it is not created twice. This failed execution was retried more than once, and an earlier retry created this item: that retry's execution has its output. Go on from that execution (retry it if it failed), not from this one.",
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
		`Item ${itemIndex}: another retry of this execution sent this item, and its outcome is unknown: the service may or may not have the record`,
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
