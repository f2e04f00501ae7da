import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	IdempotencyKeys,
	thisProcess,
	type KeySettings,
	type KeysProcess,
} from '../exactlyOnce/idempotencyKeys';
import { RunRecord } from '../exactlyOnce/runRecord';
import { keyWarnings, noCounts, runHints, withStopReport } from '../exactlyOnce/runReport';
import { prepareAheadAndSend } from '../helpers/pool';
import { ServiceClient } from '../transport/request';
import { readRunOptions } from './common.descriptions';
import { asNodeError, errorItem } from './itemErrors';
import { ItemStep, type RunTurns, type StepRun } from './itemStep';
import { itemFields } from './itemParameter';
import { keySettingNames, keysChecked, keysConfigured, readKeySettings } from './keys.descriptions';
import { findOperation } from './resources';
import { isToolRun, toolAnswers } from './tool';

/** What a run needs before its first item: the operation, the run options, a client, and the keys if set. */
type Run = Omit<StepRun, 'record' | 'counts'>;

async function prepareRun(
	context: IExecuteFunctions,
	record: RunRecord,
	keysProcess: KeysProcess,
): Promise<Run> {
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
	// Only the run-wide fields are read: the Idempotency Key among them is an expression per item (evaluated at the
	// item's turn), and n8n's expression engine costs about a millisecond a time (docs/performance.md).
	const options = itemFields(context, 'options', 0, keySettingNames);
	const runOptions = readRunOptions(options);
	// Read in every run, keys or not: a wrong History Size fails the run, rather than being ignored until a
	// retried execution needs it (and then turning its retry keys off).
	const keySettings = readKeySettings(options);
	// No Idempotency Key option: no keys, and the node works as it always has (a retried execution aside). Added but
	// blank: keys, and each item's blank key fails it (itemStep.ts).
	const keys = keysChecked(context.getNode().parameters)
		? IdempotencyKeys.of(context, keySettings, keysProcess)
		: undefined;
	const retries = keys ? undefined : retryKeys(context, keySettings, record, keysProcess);
	const client = await ServiceClient.create(context, runOptions);
	return {
		operation,
		operationName: `${resource}/${operationName}`,
		runOptions,
		client,
		keys: keys ?? retries?.keys,
		retryFamily: retries?.family,
	};
}

/**
 * A retried execution (n8n's executions list: mode "retry") with no Idempotency Key claims keys of its own for the
 * items it sends, one per item of the failed execution (itemStep.ts), in the same store and under the same lock:
 * n8n lets one failed execution be retried more than once (the original again after its retry failed too), and
 * each retry starts from the same saved record, which does not hold what another retry created. None where a
 * Remove Duplicates node keeps the workflow's row of the store: that run is as without them (docs/reference.md).
 */
function retryKeys(
	context: IExecuteFunctions,
	settings: KeySettings,
	record: RunRecord,
	keysProcess: KeysProcess,
): { keys: IdempotencyKeys; family: string } | undefined {
	const family = record.family;
	if (context.getMode() !== 'retry' || family === undefined) return undefined;
	try {
		const keys = IdempotencyKeys.of(context, { ...settings, purpose: 'retries' }, keysProcess);
		return { keys, family };
	} catch {
		// Only the Remove Duplicates node that shares the row (IdempotencyKeys.of): its run is as without them.
		return undefined;
	}
}

/** The node's run: its outputs, or an AI agent's tool answers; its keys live in `keysProcess`. */
export async function router(
	this: IExecuteFunctions,
	keysProcess: KeysProcess = thisProcess,
): Promise<INodeExecutionData[][]> {
	const output = await routeItems.call(this, keysProcess);
	return isToolRun(this) ? toolAnswers(this, output) : output;
}

/**
 * The item loop, written once for every operation: items prepared ahead of the workers, bounded concurrency,
 * output in input order with pairedItem, and the error policy — an error item under "Continue", or a stop that
 * says what was already created. Whether and how each item is sent is its step's (itemStep.ts). An item that
 * failed again without a request (an unknown outcome) does not stop the run: every safe item (returned, or never
 * sent) is handled first, then the run stops.
 */
async function routeItems(
	this: IExecuteFunctions,
	keysProcess: KeysProcess,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const continueOnFail = this.continueOnFail();
	const withAlreadyCreated = keysConfigured(this.getNode().parameters);
	const outputs = (created: INodeExecutionData[], alreadyCreated: INodeExecutionData[] = []) =>
		withAlreadyCreated ? [created, alreadyCreated] : [created];

	const record = RunRecord.of(this, { toolCall: isToolRun(this) });
	let run: Run;
	try {
		run = await prepareRun(this, record, keysProcess);
	} catch (caught) {
		const error = asNodeError(this, caught, 0);
		if (!continueOnFail) throw error;
		// Nothing can be sent (credential, Base URL, run options): every item fails with it, and the workflow goes on.
		return outputs(items.map((_, itemIndex) => errorItem(error, itemIndex)));
	}
	const { operation, operationName, runOptions, client } = run;

	const counts = noCounts(runOptions.resendCodes);
	const step = new ItemStep(this, { ...run, record, counts }, items.length);
	const turns: RunTurns = { results: [], alreadyCreated: [], failures: [], notResent: [] };
	const { results, alreadyCreated, failures, notResent } = turns;
	const handled = new Set<number>();

	await prepareAheadAndSend({
		count: items.length,
		concurrency: runOptions.concurrency,
		// One prepared item per worker: each free worker finds its next item ready, and no more is held.
		lookAhead: runOptions.concurrency,
		prepare: (itemIndex) => operation.prepare.call(this, itemIndex),
		send: async (itemIndex, take) => {
			handled.add(itemIndex);
			await step.turn(itemIndex, take, turns, continueOnFail);
		},
		shouldStop: () => failures.length > 0,
	});
	await step.keysWritten();
	client.log.summary();

	if (failures.length > 0 || notResent.length > 0) {
		record.seal(operationName);
		const createdId = operation.createdId?.bind(operation);
		const stopped = { failures, notResent, record, createdId, handled, count: items.length };
		throw withStopReport({ ...stopped, counts });
	}
	const created = results.filter((item): item is INodeExecutionData => item !== undefined);
	if (created.some((item) => item.json.error !== undefined)) record.seal(operationName);
	else record.forget();
	showHints(this, [...client.log.hints(), ...runHints(counts)]);
	showHints(this, keyWarnings(counts), 'warning');
	return outputs(
		created,
		alreadyCreated.filter((item): item is INodeExecutionData => item !== undefined),
	);
}

/** Execution hints, shown with the node's output (n8n 1.x and 2.x; a context without them shows nothing). */
function showHints(
	context: IExecuteFunctions,
	messages: string[],
	type: 'info' | 'warning' = 'info',
): void {
	if (messages.length === 0 || typeof context.addExecutionHints !== 'function') return;
	context.addExecutionHints(
		...messages.map((message) => ({
			message,
			type,
			location: 'outputPane' as const,
		})),
	);
}
