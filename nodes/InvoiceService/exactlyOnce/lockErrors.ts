/**
 * How the lock and the key store fail: the errors of the Idempotency Keys' use of n8n's processed-data store
 * (rowLock.ts, rowBatch.ts), told apart as the item's error needs them (idempotencyKeys.ts).
 */

/** Why the lock could not be had. */
export class LockError extends Error {
	constructor(
		readonly kind: 'busy' | 'conflict' | 'store',
		message: string,
		readonly cause?: unknown,
	) {
		super(message);
	}
}

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
	"The workflow's entry in n8n's processed-data store is used by another node (a Remove Duplicates node with Scope: Workflow?)";

/** Any failure of the store as a LockError: a Remove Duplicates row's mode error is a conflict. */
export function asLockError(error: unknown): LockError {
	if (error instanceof LockError) return error;
	if (isModeConflict(error)) return new LockError('conflict', conflictMessage, error);
	return new LockError('store', storeMessage(error), error);
}

export function storeMessage(error: unknown): string {
	return (error as Error)?.message ?? String(error);
}
