import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { prepareAheadAndSend } from '../helpers/pool';
import { FieldError } from '../helpers/validate';
import { mayHaveActed } from '../transport/nodeError';
import { ServiceClient } from '../transport/request';
import { readRunOptions, type RunOptions } from './common.descriptions';
import * as customer from './customer';
import { EarlierTries } from './earlierTries';
import * as invoice from './invoice';
import type { Operation } from './operation';

/** Every resource's operations, as its index exports them: the router's operation table. */
export const resources: Record<string, { operations: Record<string, Operation> }> = {
	customer,
	invoice,
};

/** The operation chosen in the node, or undefined (own keys only: "constructor" is not an operation). */
function findOperation(resource: string, operation: string): Operation | undefined {
	const operations = Object.hasOwn(resources, resource) ? resources[resource].operations : {};
	return Object.hasOwn(operations, operation) ? operations[operation] : undefined;
}

type NodeError = NodeApiError | NodeOperationError;

/** What a run needs before its first item: the operation, the run options and a client for the service. */
async function prepareRun(
	context: IExecuteFunctions,
): Promise<{ operation: Operation; runOptions: RunOptions; client: ServiceClient }> {
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
	const runOptions = readRunOptions(context.getNodeParameter('options', 0, {}) as IDataObject);
	const client = await ServiceClient.create(context, runOptions);
	return { operation, runOptions, client };
}

/**
 * The item loop, written once for every operation: items prepared ahead of the workers, bounded concurrency,
 * output in input order with pairedItem, and the error policy — an error item under "Continue", or a stop that
 * says what was already created. Under n8n's Retry On Fail, what an earlier try created is returned, not sent
 * again (earlierTries.ts).
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const continueOnFail = this.continueOnFail();

	let run: Awaited<ReturnType<typeof prepareRun>>;
	try {
		run = await prepareRun(this);
	} catch (caught) {
		const error = asNodeError(this, caught, 0);
		if (!continueOnFail) throw error;
		// Nothing can be sent (credential, Base URL, run options): every item fails with it, and the workflow goes on.
		return [items.map((_, itemIndex) => errorItem(error, itemIndex))];
	}
	const { operation, runOptions, client } = run;

	const earlier = EarlierTries.of(this, items);
	const counts = { reused: 0, notResent: 0 };
	const results: Array<INodeExecutionData | undefined> = new Array(items.length);
	const failures: Array<{ error: NodeError; itemIndex: number }> = [];
	let handled = 0;

	await prepareAheadAndSend({
		count: items.length,
		concurrency: runOptions.concurrency,
		// One prepared item per worker: each free worker finds its next item ready, and no more is held.
		lookAhead: runOptions.concurrency,
		prepare: (itemIndex) => operation.prepare.call(this, itemIndex),
		send: async (itemIndex, take) => {
			handled++;
			const remembered = earlier.recall(itemIndex);
			try {
				if (remembered && 'output' in remembered) {
					results[itemIndex] = remembered.output;
					counts.reused++;
					return;
				}
				if (remembered) {
					counts.notResent++;
					throw remembered.error;
				}
				// A preparation error surfaces here, at the item's turn, exactly as if it were prepared now.
				const output = await operation.send.call(this, take(), itemIndex, client);
				results[itemIndex] = { ...output, pairedItem: { item: itemIndex } };
				earlier.remember(itemIndex, { output: results[itemIndex] });
			} catch (caught) {
				const error = asNodeError(this, caught, itemIndex);
				if (!remembered && mayHaveActed(caught)) earlier.remember(itemIndex, { error });
				if (continueOnFail) {
					results[itemIndex] = errorItem(error, itemIndex);
				} else {
					failures.push({ error, itemIndex });
				}
			}
		},
		shouldStop: () => failures.length > 0,
	});
	client.log.summary();

	if (failures.length > 0) {
		throw withStopReport(failures, results, operation, items.length - handled);
	}
	const output = results as INodeExecutionData[];
	if (!output.some((item) => item.json.error !== undefined)) earlier.forget();
	showHints(this, [...client.log.hints(), ...retryHints(counts)]);
	return [output];
}

/** What n8n's Retry On Fail changed in this try, in the user's words. */
function retryHints({ reused, notResent }: { reused: number; notResent: number }): string[] {
	return [
		reused > 0
			? `${reused} item(s) were created in an earlier try of this node (Retry On Fail): their first output is returned and they were not sent again.`
			: '',
		notResent > 0
			? `${notResent} item(s) were not sent again on Retry On Fail: the service may already have carried them out (see their errors).`
			: '',
	].filter(Boolean);
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
	const httpCode = error instanceof NodeApiError && error.httpCode ? error.httpCode : undefined;
	return {
		error: {
			message: error.message,
			...(error.description ? { description: error.description } : {}),
			...(httpCode ? { httpCode } : {}),
			itemIndex,
		},
	};
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

/**
 * When the run stops, the first failed item's error is thrown, and it says what else happened: which items were
 * already created (so a re-run can skip them), which others failed while in flight, and how many were not sent.
 */
function withStopReport(
	failures: Array<{ error: NodeError; itemIndex: number }>,
	results: Array<INodeExecutionData | undefined>,
	operation: Operation,
	notSent: number,
): NodeError {
	failures.sort((a, b) => a.itemIndex - b.itemIndex);
	const [{ error }, ...others] = failures;
	const keyRefused = error instanceof NodeApiError && error.httpCode === '401';
	const created: string[] = [];
	results.forEach((result, index) => {
		const id = result ? operation.createdId?.(result.json) : undefined;
		if (id) created.push(`item ${index} (${id})`);
	});
	// Every one is listed, however many: a re-run must be able to skip exactly these.
	if (created.length === 0 && others.length === 0 && notSent === 0) return error;
	const report = [
		created.length
			? `Already created in this run before it stopped: ${created.join(', ')}. Skip these when you run again.`
			: 'Nothing was created in this run before it stopped.',
		...others.map((other) => `Item ${other.itemIndex} failed too: ${other.error.message}`),
		notSent > 0
			? `${notSent} other item(s) were not sent${keyRefused ? ': the service refused the API key' : ''}.`
			: '',
	]
		.filter(Boolean)
		.join(' ');
	error.description = [error.description, report].filter(Boolean).join('\n\n');
	return error;
}
