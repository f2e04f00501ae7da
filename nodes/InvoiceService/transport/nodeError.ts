import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { Failure } from './errors';

/** How an item's failure ended, for the error's last words. */
export interface FailedItem {
	itemIndex: number;
	/** Set when the item gave up waiting for retries: how long it waited, and how long it was allowed to. */
	gaveUp?: { waitedMs: number; maxRetryWaitMs: number };
}

/**
 * The one place a failure becomes the error n8n shows: its message and description, the HTTP code, the item, and
 * whether the service may have acted (remembered for `mayHaveActed`).
 */
export function nodeApiError(
	node: INode,
	failure: Failure,
	{ itemIndex, gaveUp }: FailedItem,
): NodeApiError {
	const retried = gaveUp
		? ` Retried for ${Math.round(gaveUp.waitedMs / 1000)} s (Max Retry Wait: ${Math.round(gaveUp.maxRetryWaitMs / 1000)} s), then gave up.`
		: '';
	const retryAfter =
		failure.retryAfterMs !== undefined
			? ` The service asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s.`
			: '';
	const description = `${failure.description ?? ''}${retryAfter}${retried}`.trim();
	// A plain object, never the request error itself: that one carries the request's headers.
	const safeResponse: JsonObject = {
		message: failure.message,
		...(failure.httpCode ? { httpCode: failure.httpCode } : {}),
	};
	const error = new NodeApiError(node, safeResponse, {
		message: failure.message,
		...(description ? { description } : {}),
		...(failure.httpCode ? { httpCode: String(failure.httpCode) } : {}),
		itemIndex,
	});
	if (failure.serviceMayHaveActed) serviceMayHaveActed.add(error);
	return error;
}

/** Errors of requests the service acted on, or may have: sending them again could create a duplicate. */
const serviceMayHaveActed = new WeakSet<Error>();

/** Whether the item's request was (or may have been) carried out by the service although the item failed. */
export function mayHaveActed(error: unknown): boolean {
	return error instanceof Error && serviceMayHaveActed.has(error);
}

/** A credential that cannot be used: found before anything is sent. */
export function credentialProblem(node: INode, problem: string, fix: string): NodeApiError {
	return new NodeApiError(node, { message: problem } as JsonObject, {
		message: problem,
		description: `Nothing was sent. ${fix} in the Invoice Service API credential.`,
	});
}
