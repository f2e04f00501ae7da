import type { IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { capitalized } from '../helpers/title';
import { KEYS_TIMING } from './timing';

/**
 * How the lock and the key store fail: the errors of the Idempotency Keys' use of n8n's processed-data store
 * (rowLock.ts, rowBatch.ts), told apart as the item's error needs them (idempotencyKeys.ts).
 */

/**
 * Whose keys a store error is about: the user's Idempotency Keys, or the node's own for the items a retried
 * execution sends (actions/itemStep.ts, "retry keys").
 */
export type KeysPurpose = 'idempotency' | 'retries';

/** Why the lock could not be had. */
export class LockError extends Error {
	constructor(
		readonly kind: 'busy' | 'conflict' | 'store',
		message: string,
		readonly cause?: unknown,
		/**
		 * What the failure is known to have left, for the item's error to tell (never read from the text):
		 * `notWritten`, an outcome certainly not written; `inFlight`, keys that may now look in flight.
		 */
		readonly left?: 'notWritten' | 'inFlight',
	) {
		super(message);
	}
}

/** An outcome not written because it would have been sent too late (keyStore.ts, lateAfter): certainly not written. */
const TOO_LATE =
	'it came too late to be written safely (another execution may have stopped waiting for this key meanwhile), so it was not written';

export const tooLateError = (): LockError =>
	new LockError('store', TOO_LATE, undefined, 'notWritten');

export const isTooLate = (error: unknown): boolean =>
	error instanceof LockError && error.left === 'notWritten';

/** A claims' check that failed after writing, its new entries not told from the held ones (rowBatch.ts, undo). */
const CHECK_LEFT_IN_FLIGHT =
	"n8n's database failed while recording Idempotency Keys, after writing them: this item's key may now look as if it were being sent, so a later delivery of its event waits Max Retry Wait + Timeout + 30 s, then fails as outcome unknown with a resend code (nothing was sent for this item: enter that code)";

export const leftInFlightError = (): LockError =>
	new LockError('store', CHECK_LEFT_IN_FLIGHT, undefined, 'inFlight');

/** An item's error from the store (storeItemError): whether it says its key may now look in flight. */
export class StoreItemError extends NodeOperationError {
	constructor(
		node: INode,
		message: string,
		options: ConstructorParameters<typeof NodeOperationError>[2],
		readonly leftInFlight: boolean,
	) {
		super(node, message, options);
	}
}

export const saysLeftInFlight = (error: unknown): boolean =>
	error instanceof StoreItemError && error.leftInFlight;

/** A failed store call counts as a lost first-INSERT race only for the primary-key error (PostgreSQL, SQLite). */
export function isPrimaryKeyCollision(error: unknown): boolean {
	const { code, message, driverError } = (error ?? {}) as {
		code?: unknown;
		message?: unknown;
		driverError?: { code?: unknown };
	};
	const codes = [code, driverError?.code];
	if (
		codes.some((value) =>
			['23505', 'SQLITE_CONSTRAINT', 'SQLITE_CONSTRAINT_PRIMARYKEY'].includes(value as string),
		)
	)
		return true;
	return (
		typeof message === 'string' &&
		/duplicate key value|UNIQUE constraint failed|PRIMARY KEY|ER_DUP_ENTRY/i.test(message)
	);
}

/** n8n's DeduplicationError for a row written in another mode: a Remove Duplicates node's row. */
const isModeConflict = (error: unknown) =>
	/incompatible setting/i.test(String((error as Error)?.message ?? ''));

export const conflictMessage =
	"Another node keeps its history in this workflow's entry of n8n's database (a Remove Duplicates node with Scope: Workflow?)";

/** Any failure of the store as a LockError: a Remove Duplicates row's mode error is a conflict. */
export function asLockError(error: unknown): LockError {
	if (error instanceof LockError) return error;
	if (isModeConflict(error)) return new LockError('conflict', conflictMessage, error);
	return new LockError('store', storeMessage(error), error);
}

export function storeMessage(error: unknown): string {
	return (error as Error)?.message ?? String(error);
}

/** How long a lock no one gives back is seen unchanged before a waiter takes it over (timing.ts), in seconds. */
const takeOverSeconds = (KEYS_TIMING.lock.markAfterMs + KEYS_TIMING.lock.leaseMs) / 1000;

/**
 * A store or lock failure, as the item's error. n8n's database text goes in the description only: in the
 * message, NodeOperationError would rewrite ECONNREFUSED or ETIMEDOUT into "the service refused the connection".
 */
export function storeItemError(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
	purpose: KeysPurpose,
): StoreItemError {
	const kind = error instanceof LockError ? error.kind : 'store';
	// The node's own words (a busy row, a write too late, a conflict) as they are; n8n's database's as it said them.
	const raw = error instanceof LockError ? error.cause : error;
	const ours = error instanceof LockError && (raw === undefined || kind === 'conflict');
	const rawText = storeMessage(raw);
	const said = ours
		? `${capitalized(error.message)}${raw === undefined ? '' : ` (n8n's database said: ${rawText})`}`
		: `n8n's database said: ${rawText}`;
	const checked =
		purpose === 'idempotency'
			? 'the Idempotency Key'
			: 'what other retries of this execution sent for this item';
	const keys = purpose === 'idempotency' ? 'the Idempotency Keys' : "the node's checks of retries";
	const message = {
		store: `Item ${itemIndex}: n8n's database could not check ${checked}`,
		busy: `Item ${itemIndex}: ${keys} of this workflow stayed busy in n8n's database`,
		conflict: `Item ${itemIndex}: ${keys} cannot be kept in this workflow`,
	}[kind];
	const next = {
		store: "Check that n8n's database is reachable and has room, then run the item again.",
		busy: `Another execution may be checking many keys, or an n8n process stopped in the middle of checking them (they are freed once unchanged for ${takeOverSeconds} s). Run the item again.`,
		conflict:
			'Another node (a Remove Duplicates node with Scope: Workflow) uses the same entry of n8n\'s database: set its Scope to "Node" and run again.',
	}[kind];
	return new StoreItemError(
		context.getNode(),
		message,
		{
			itemIndex,
			description: `Nothing was sent to the service for this item. ${said}. ${next}`,
		},
		error instanceof LockError && error.left === 'inFlight',
	);
}
