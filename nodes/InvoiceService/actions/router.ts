import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { prepareAheadAndSend } from '../helpers/pool';
import { FieldError } from '../helpers/validate';
import { ServiceClient } from '../transport/request';
import { readRunOptions, type RunOptions } from './common.descriptions';
import * as customer from './customer';
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

/**
 * The item loop, written once for every operation: items prepared ahead of the workers, bounded concurrency,
 * output in input order with pairedItem, and the error policy — an error item under "Continue", or a stop that
 * says what was already created.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operation = findOperation(resource, operationName);
	if (!operation) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operationName}" is not known for "${resource}"`,
		);
	}

	// Run-wide settings come from the first item: they shape the whole batch, not one request.
	let runOptions: RunOptions;
	try {
		runOptions = readRunOptions(this.getNodeParameter('options', 0, {}) as IDataObject);
	} catch (caught) {
		throw asNodeError(this, caught, 0);
	}
	const client = await ServiceClient.create(this, runOptions);

	const results: Array<INodeExecutionData | undefined> = new Array(items.length);
	const failures: Array<{ error: NodeError; itemIndex: number }> = [];
	let attempted = 0;
	const continueOnFail = this.continueOnFail();

	await prepareAheadAndSend({
		count: items.length,
		concurrency: runOptions.concurrency,
		// One prepared item per worker: each free worker finds its next item ready, and no more is held.
		lookAhead: runOptions.concurrency,
		prepare: (itemIndex) => operation.prepare.call(this, itemIndex),
		send: async (itemIndex, take) => {
			attempted++;
			try {
				// A preparation error surfaces here, at the item's turn, exactly as if it were prepared now.
				const output = await operation.send.call(this, take(), itemIndex, client);
				results[itemIndex] = { ...output, pairedItem: { item: itemIndex } };
			} catch (caught) {
				const error = asNodeError(this, caught, itemIndex);
				if (continueOnFail) {
					results[itemIndex] = { json: errorJson(error), pairedItem: { item: itemIndex } };
				} else {
					failures.push({ error, itemIndex });
				}
			}
		},
		shouldStop: () => failures.length > 0,
	});
	client.logRunSummary();

	if (failures.length > 0) {
		throw withStopReport(failures, results, operation, items.length - attempted);
	}
	return [results as INodeExecutionData[]];
}

/**
 * The json of an error item: `{ error: { message, description, httpCode, itemIndex } }`, the shape n8n's HTTP
 * Request node uses. A json whose only key is `error` is what every n8n version (1.x included) routes to the
 * error output; setting `item.error` instead would make n8n 2.x replace the json with `{ error }` and drop the
 * HTTP code.
 */
function errorJson(error: NodeError): IDataObject {
	const httpCode = error instanceof NodeApiError && error.httpCode ? error.httpCode : undefined;
	const itemIndex = error.context?.itemIndex as number | undefined;
	return {
		error: {
			message: error.message,
			...(error.description ? { description: error.description } : {}),
			...(httpCode ? { httpCode } : {}),
			...(itemIndex !== undefined ? { itemIndex } : {}),
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
		notSent > 0 ? `${notSent} other item(s) were not sent.` : '',
	]
		.filter(Boolean)
		.join(' ');
	error.description = [error.description, report].filter(Boolean).join('\n\n');
	return error;
}
