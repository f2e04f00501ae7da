import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { prepareAheadAndSend } from '../helpers/pool';
import { FieldError } from '../helpers/validate';
import { mayHaveActed } from '../transport/nodeError';
import { ServiceClient } from '../transport/request';
import { readRunOptions, type RunOptions } from './common.descriptions';
import {
	type Claim,
	IdempotencyKeys,
	keysConfigured,
	unknownKeyError,
} from '../exactlyOnce/idempotencyKeys';
import type { Operation, Prepared } from './operation';
import { findOperation } from './resources';
import { fingerprintOf, type RecordedError, RunRecord } from '../exactlyOnce/runRecord';
import {
	noCounts,
	runHints,
	withStopReport,
	type Failed,
	type NodeError,
} from '../exactlyOnce/runReport';
import { UNKNOWN_OUTCOME_WAY_FORWARD } from '../transport/errors';

/** What a run needs before its first item: the operation, the run options, a client, and the keys if set. */
interface Run {
	operation: Operation;
	/** "resource/operation": part of each request's fingerprint. */
	operationName: string;
	runOptions: RunOptions;
	client: ServiceClient;
	keys: IdempotencyKeys | undefined;
}

async function prepareRun(context: IExecuteFunctions): Promise<Run> {
	const resource = context.getNodeParameter('resource', 0) as string;
	const operationName = context.getNodeParameter('operation', 0) as string;
	const operation = findOperation(resource, operationName);
	if (!operation) {
		throw new NodeOperationError(
			context.getNode(),
			`The operation "${operationName}" is not known for "${resource}"`,
		);
	}
	// Run-wide settings come from the first item: they shape the whole batch, not one request.
	const options = context.getNodeParameter('options', 0, {}) as IDataObject;
	const runOptions = readRunOptions(options);
	const keys = IdempotencyKeys.of(context, options);
	const client = await ServiceClient.create(context, runOptions);
	return { operation, operationName: `${resource}/${operationName}`, runOptions, client, keys };
}

/**
 * The item loop, written once for every operation: items prepared ahead of the workers, bounded concurrency,
 * output in input order with pairedItem, and the error policy — an error item under "Continue", or a stop that
 * says what was already created. One path decides, for every way the same item comes back (n8n's Retry On Fail,
 * a retried execution, a repeated Idempotency Key), whether it is sent: already created → its output is
 * returned (runRecord.ts) or it goes to Already Created (idempotencyKeys.ts); outcome unknown → it fails again
 * without a request (or is sent, when Resend Unknown Outcomes is on). An item that fails again without a request
 * does not stop the run: every safe item (returned, or never sent) is handled first, then the run stops.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const continueOnFail = this.continueOnFail();
	const withAlreadyCreated = keysConfigured(this.getNode().parameters);
	const outputs = (created: INodeExecutionData[], alreadyCreated: INodeExecutionData[] = []) =>
		withAlreadyCreated ? [created, alreadyCreated] : [created];

	let run: Run;
	try {
		run = await prepareRun(this);
	} catch (caught) {
		const error = asNodeError(this, caught, 0);
		if (!continueOnFail) throw error;
		// Nothing can be sent (credential, Base URL, run options): every item fails with it, and the workflow goes on.
		return outputs(items.map((_, itemIndex) => errorItem(error, itemIndex)));
	}
	const { operation, operationName, runOptions, client, keys } = run;

	const record = RunRecord.of(this);
	const counts = noCounts();
	const results: Array<INodeExecutionData | undefined> = new Array(items.length);
	const alreadyCreated: Array<INodeExecutionData | undefined> = new Array(items.length);
	const failures: Failed[] = [];
	/** Items failed again without a request (unknown outcome): they do not stop the other items. */
	const notResent: Failed[] = [];
	const notResentItems = new Set<number>();
	const handled = new Set<number>();

	/** The output item of a created record (the PDF downloaded, for an invoice that asks for it). */
	const outputOf = async (prepared: Prepared, created: IDataObject, itemIndex: number) => {
		const output = operation.outputOf
			? await operation.outputOf.call(this, prepared, created, itemIndex, client)
			: { json: created };
		return { ...output, pairedItem: { item: itemIndex } };
	};

	/** One item, from its prepared request to its output; throws its error. */
	const runItem = async (itemIndex: number, prepared: Prepared) => {
		const recalled = record.recall(itemIndex);
		if (recalled && 'unknown' in recalled) {
			if (!runOptions.resendUnknown) {
				counts.notResent++;
				notResentItems.add(itemIndex);
				throw recordedError(this, recalled.unknown, itemIndex);
			}
			counts.resent++;
			record.resend(itemIndex);
		} else if (recalled) {
			// Created before: never created again, whatever changed; a changed request only earns a hint.
			if (
				recalled.fingerprint &&
				recalled.fingerprint !== fingerprintOf(operationName, prepared.body)
			) {
				counts.changed.push(itemIndex);
			}
			if (recalled.output) {
				counts.returned++;
				return recalled.output;
			}
			counts.rebuilt++;
			return await outputOf(prepared, recalled.created, itemIndex);
		}
		const key = keys?.read(itemIndex);
		let claim: Claim | undefined;
		if (key !== undefined) {
			const found = await keys!.claim(key, itemIndex, { resendUnknown: runOptions.resendUnknown });
			if (found.state === 'created') {
				counts.alreadyCreated++;
				alreadyCreated[itemIndex] = alreadyCreatedItem(key, itemIndex, found.where);
				return undefined;
			}
			if (found.state === 'unknown') {
				// Like an unknown outcome in the record: failed without a request, and the other items go on.
				counts.notResent++;
				notResentItems.add(itemIndex);
				throw unknownKeyError(this, key, itemIndex);
			}
			claim = found.claim;
		}
		let created: IDataObject;
		try {
			created = await operation.create.call(this, prepared, itemIndex, client);
		} catch (caught) {
			await settleOrSay(claim, mayHaveActed(caught) ? 'unknown' : 'release', caught);
			throw asNodeError(this, caught, itemIndex);
		}
		// The record exists whatever the store says: if n8n's database cannot mark the key created, it stays in
		// flight, and a later delivery of the event fails as unknown (never sent twice).
		await claim?.created().catch(() => undefined);
		record.created(itemIndex, prepared.body, created);
		return await outputOf(prepared, created, itemIndex);
	};

	await prepareAheadAndSend({
		count: items.length,
		concurrency: runOptions.concurrency,
		// One prepared item per worker: each free worker finds its next item ready, and no more is held.
		lookAhead: runOptions.concurrency,
		prepare: (itemIndex) => operation.prepare.call(this, itemIndex),
		send: async (itemIndex, take) => {
			handled.add(itemIndex);
			try {
				// A preparation error surfaces here, at the item's turn, exactly as if it were prepared now.
				const output = await runItem(itemIndex, take());
				if (!output) return;
				results[itemIndex] = output;
				record.returned(itemIndex, output);
			} catch (caught) {
				const error = asNodeError(this, caught, itemIndex);
				if (mayHaveActed(caught)) record.unknown(itemIndex, wordsOf(error));
				if (continueOnFail) {
					results[itemIndex] = errorItem(error, itemIndex);
				} else if (notResentItems.has(itemIndex)) {
					notResent.push({ error, itemIndex });
				} else {
					failures.push({ error, itemIndex });
				}
			}
		},
		shouldStop: () => failures.length > 0,
	});
	client.log.summary();

	if (failures.length > 0 || notResent.length > 0) {
		record.seal(operationName);
		const stopped = { failures, notResent, record, operation, handled, count: items.length };
		throw withStopReport({ ...stopped, counts });
	}
	const created = results.filter((item): item is INodeExecutionData => item !== undefined);
	if (created.some((item) => item.json.error !== undefined)) record.seal(operationName);
	else record.forget();
	showHints(this, [...client.log.hints(), ...runHints(counts)]);
	return outputs(
		created,
		alreadyCreated.filter((item): item is INodeExecutionData => item !== undefined),
	);
}

/**
 * A create that certainly did not happen gives its key back, so that a re-delivered event is created then; one
 * that may have happened marks it unknown. If n8n's database cannot take the change, the error says what that
 * means.
 */
async function settleOrSay(
	claim: Claim | undefined,
	outcome: 'unknown' | 'release',
	caught: unknown,
): Promise<void> {
	try {
		await (outcome === 'unknown' ? claim?.unknown() : claim?.release());
	} catch (storeError) {
		const error = caught as { description?: string | null };
		const said = `The Idempotency Key could not be ${outcome === 'unknown' ? 'marked' : 'released'} in n8n's database (${(storeError as Error).message}): a later delivery of this event waits for this one, then fails as an unknown outcome.`;
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

/** Execution hints, shown with the node's output (n8n 1.x and 2.x; a context without them shows nothing). */
function showHints(context: IExecuteFunctions, messages: string[]): void {
	if (messages.length === 0 || typeof context.addExecutionHints !== 'function') return;
	context.addExecutionHints(
		...messages.map((message) => ({
			message,
			type: 'info' as const,
			location: 'outputPane' as const,
		})),
	);
}

function errorItem(error: NodeError, itemIndex: number): INodeExecutionData {
	return { json: errorJson(error, itemIndex), pairedItem: { item: itemIndex } };
}

/**
 * The json of an error item: `{ error: { message, description, httpCode, itemIndex } }`, the shape n8n's HTTP
 * Request node uses. A json whose only key is `error` is what every n8n version (1.x included) routes to the
 * error output; setting `item.error` instead would make n8n 2.x replace the json with `{ error }` and drop the
 * HTTP code.
 */
function errorJson(error: NodeError, itemIndex: number): IDataObject {
	return { error: { ...wordsOf(error), itemIndex } };
}

/** What an error says, as plain fields (an error item's, or the record's). */
function wordsOf(error: NodeError): RecordedError {
	const httpCode = error instanceof NodeApiError && error.httpCode ? error.httpCode : undefined;
	return {
		message: error.message,
		...(error.description ? { description: error.description } : {}),
		...(httpCode ? { httpCode } : {}),
	};
}

/** The error of an item whose outcome was unknown in an earlier run: said again, and not sent. */
function recordedError(
	context: IExecuteFunctions,
	{ message, description, httpCode }: RecordedError,
	itemIndex: number,
): NodeError {
	return new NodeApiError(context.getNode(), { message } as never, {
		message,
		description: [
			description,
			`Not sent again: an earlier try of this node sent it, and the service may have carried it out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
		]
			.filter(Boolean)
			.join(' '),
		...(httpCode ? { httpCode } : {}),
		itemIndex,
	});
}

function asNodeError(context: IExecuteFunctions, error: unknown, itemIndex: number): NodeError {
	if (error instanceof FieldError) {
		return new NodeOperationError(context.getNode(), `Item ${itemIndex}: ${error.message}`, {
			itemIndex,
			description: 'Nothing was sent to the service for this item.',
		});
	}
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}
