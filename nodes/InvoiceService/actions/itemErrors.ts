import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { RecordedError } from '../exactlyOnce/runRecord';
import type { NodeError } from '../exactlyOnce/runReport';
import { fitTitle } from '../helpers/title';
import { FieldError } from '../helpers/validate';

/** Any error of an item as n8n's own: a field's error says it names the item and that nothing was sent. */
export function asNodeError(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): NodeError {
	if (error instanceof FieldError) {
		return withFittedTitle(
			new NodeOperationError(context.getNode(), `Item ${itemIndex}: ${error.message}`, {
				itemIndex,
				description: ['Nothing was sent to the service for this item.', error.next]
					.filter(Boolean)
					.join(' '),
			}),
		);
	}
	const nodeError =
		error instanceof NodeApiError || error instanceof NodeOperationError
			? error
			: new NodeOperationError(context.getNode(), error as Error, { itemIndex });
	return withFittedTitle(nodeError);
}

/** Every error the node gives: its title at most MAX_TITLE_CHARS, what was cut kept in the description. */
function withFittedTitle(error: NodeError): NodeError {
	const fitted = fitTitle(error.message, error.description);
	error.message = fitted.message;
	if (fitted.description !== undefined) error.description = fitted.description;
	return error;
}

/**
 * An error item: json `{ error: { message, description, httpCode, itemIndex } }`, the shape n8n's HTTP Request
 * node uses. A json whose only key is `error` is what every n8n version (1.x included) routes to the error
 * output; setting `item.error` instead would make n8n 2.x replace the json with `{ error }` and drop the HTTP code.
 */
export function errorItem(error: NodeError, itemIndex: number): INodeExecutionData {
	const json: IDataObject = { error: { ...wordsOf(error), itemIndex } };
	return { json, pairedItem: { item: itemIndex } };
}

/** What an error says, as plain fields (an error item's, or the record's). */
export function wordsOf(error: NodeError): RecordedError {
	const httpCode = error instanceof NodeApiError && error.httpCode ? error.httpCode : undefined;
	return {
		message: error.message,
		...(error.description ? { description: error.description } : {}),
		...(httpCode ? { httpCode } : {}),
	};
}
