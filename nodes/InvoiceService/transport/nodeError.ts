import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import type { Failure } from './errors';

/** How an item's failure ended, for the error's last words. */
export interface FailedItem {
	itemIndex: number;
	/**
	 * Set when the item gave up retrying: how long it waited, how long it was allowed to, and, when it stopped
	 * at the most sends of one request rather than at the time, how many it sent.
	 */
	gaveUp?: { waitedMs: number; maxRetryWaitMs: number; sends?: number };
}

/**
 * The one place a failure becomes the error n8n shows: its message and description, the HTTP code, the item, and
 * whether the service may have acted (`context.serviceMayHaveActed`, read by `mayHaveActed`).
 */
export function nodeApiError(
	node: INode,
	failure: Failure,
	{ itemIndex, gaveUp }: FailedItem,
): NodeApiError {
	const retried = !gaveUp
		? ''
		: gaveUp.sends !== undefined
			? ` Sent ${gaveUp.sends} times in ${Math.round(gaveUp.waitedMs / 1000)} s (the most the node sends one request), then gave up.`
			: ` Retried for ${Math.round(gaveUp.waitedMs / 1000)} s (Max Retry Wait: ${Math.round(gaveUp.maxRetryWaitMs / 1000)} s), then gave up.`;
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
	if (failure.serviceMayHaveActed) markMayHaveActed(error);
	return error;
}

/**
 * Marks an error as one whose request the service acted on, or may have: sending it again could create a
 * duplicate. The mark is a plain property of the error's `context` (which n8n's errors carry and n8n saves with
 * the execution), not a side table: it stays with an error that is copied, serialized or rebuilt from its fields.
 */
export function markMayHaveActed<T extends { context?: object }>(error: T): T {
	error.context = { ...(error.context ?? {}), serviceMayHaveActed: true };
	return error;
}

/** Whether the item's request was (or may have been) carried out by the service although the item failed. */
export function mayHaveActed(error: unknown): boolean {
	if (typeof error !== 'object' || error === null) return false;
	const { context } = error as { context?: { serviceMayHaveActed?: unknown } };
	return context?.serviceMayHaveActed === true;
}

/** A credential that cannot be used: found before anything is sent. */
export function credentialProblem(node: INode, problem: string, fix: string): NodeApiError {
	return new NodeApiError(node, { message: problem } as JsonObject, {
		message: problem,
		description: `Nothing was sent. ${fix} in the Invoice Service API credential.`,
	});
}
