import type { IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

/**
 * A mutex across n8n processes on the workflow's row of n8n's processed-data store (scope "workflow", context
 * ''), taken around every read-modify-write of a node's Idempotency Key row (docs/how-it-works.md, "Idempotency
 * Keys across processes"). n8n gives a node no transaction; the one atomic step it can reach is the first INSERT
 * of a row: `checkProcessedAndRecord` inserts when the row is absent, and a second INSERT fails on the primary
 * key (workflowId, context). Acquire = that insert answering "new"; release = `clearAllProcessedItems`, a DELETE.
 *
 * The row's entry count says when it was taken (its holder inserts LOCK plus 1..SLOTS stamps, one per tick of
 * the clock modulo SLOTS ticks): a waiter reads it with `getProcessedDataCount` (read-only) and breaks a lock
 * older than the lease, the mark of a holder that died (a killed worker). A lease counts from the holder's
 * acquisition, so a busy lock handed from holder to holder is never mistaken for a dead one.
 */

export type LockHelpers = Pick<
	IExecuteFunctions['helpers'],
	'checkProcessedAndRecord' | 'clearAllProcessedItems' | 'getProcessedDataCount' | 'removeProcessed'
>;

/** The limits of a hold and of a wait (tests shorten them). */
export const lockTiming = {
	/** A hold older than this is a dead holder's, and is broken; a live holder stops writing at half of it. */
	leaseMs: 60_000,
	/** The resolution of the acquisition time the row carries. */
	tickMs: 5_000,
	/** Ticks before the stamp repeats: a dead lock is seen as stale at the latest SLOTS ticks after it was taken. */
	slots: 60,
	/** How long a claim waits for the lock before its item fails with nothing sent. */
	maxWaitMs: 90_000,
	/**
	 * Polling interval bounds (with jitter). A hold takes a few round trips to the database: a waiter that looks
	 * every 50 ms at most takes the lock soon after it is given back (one small read of the lock's row a look).
	 */
	pollMinMs: 5,
	pollMaxMs: 50,
	/** The clock (tests move it). */
	now: () => Date.now(),
};

const LOCK = 'invoice-service idempotency lock';
const stamp = (n: number) => `${LOCK} ${n}`;

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
	const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
	if (code === '23505' || code === 'SQLITE_CONSTRAINT' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
		return true;
	return (
		typeof message === 'string' &&
		/duplicate key value|UNIQUE constraint failed|PRIMARY KEY|ER_DUP_ENTRY/i.test(message)
	);
}

/** n8n's DeduplicationError for a row written in another mode: a Remove Duplicates node's row. */
const isModeConflict = (error: unknown) =>
	/incompatible setting/i.test(String((error as Error)?.message ?? ''));

const conflictMessage =
	"The workflow's entry in n8n's processed-data store is used by another node (a Remove Duplicates node with Scope: Workflow?)";

const tickOf = (time: number) => Math.floor(time / lockTiming.tickMs);
/** The entries a holder inserts: LOCK and 1..SLOTS stamps (count 2..SLOTS+1 encodes the tick). */
const entriesFor = (time: number) => [
	LOCK,
	...Array.from({ length: (tickOf(time) % lockTiming.slots) + 1 }, (_, index) => stamp(index + 1)),
];
/** The age of a lock from its row's entry count (modulo SLOTS ticks); undefined when no lock has that count. */
function ageOf(count: number, time: number): number | undefined {
	const slot = count - 2;
	if (slot < 0 || slot >= lockTiming.slots) return undefined;
	const ticks = (((tickOf(time) - slot) % lockTiming.slots) + lockTiming.slots) % lockTiming.slots;
	return ticks * lockTiming.tickMs;
}

/** One process's hold of a workflow's lock at a time; the database lock orders the processes. */
const local = new Map<string, Promise<void>>();

export class RowLock {
	constructor(
		private readonly workflowId: string,
		private readonly helpers: LockHelpers,
	) {}

	/**
	 * Runs `work` holding the lock. `work` gets a check that throws when the hold is no longer safe to write in.
	 * `prepare` (reads only) runs as soon as the lock is taken, alongside the lock's own check that it was: one
	 * round trip to the database the less, which counts when n8n's database is busy.
	 */
	async hold<T>(
		prepare: () => Promise<unknown>,
		work: (stillHeld: () => void) => Promise<T>,
	): Promise<T> {
		const before = local.get(this.workflowId) ?? Promise.resolve();
		let done!: () => void;
		const mine = new Promise<void>((resolve) => (done = resolve));
		const queued = before.then(async () => await mine);
		local.set(this.workflowId, queued);
		try {
			await before;
			const acquiredAt = await this.acquire(prepare);
			try {
				return await work(() => {
					if (lockTiming.now() - acquiredAt > lockTiming.leaseMs / 2) {
						throw new LockError(
							'busy',
							"n8n's database was too slow: the Idempotency Key lock was held past half its lease",
						);
					}
				});
			} finally {
				await this.release();
			}
		} finally {
			done();
			if (local.get(this.workflowId) === queued) local.delete(this.workflowId);
		}
	}

	/** Takes the lock; the time it was taken. */
	private async acquire(prepare: () => Promise<unknown>): Promise<number> {
		const started = lockTiming.now();
		let delay = lockTiming.pollMinMs;
		for (;;) {
			const count = await this.store(
				async () => await this.helpers.getProcessedDataCount('workflow', { mode: 'entries' }),
			);
			const now = lockTiming.now();
			if (count === 0) {
				if (await this.tryInsert(now, prepare)) return now;
			} else {
				const age = ageOf(count, now);
				if (age === undefined) throw new LockError('conflict', conflictMessage);
				if (age >= lockTiming.leaseMs) {
					await this.breakStale();
					continue;
				}
			}
			if (now - started > lockTiming.maxWaitMs) {
				throw new LockError(
					'busy',
					`The Idempotency Key lock of this workflow in n8n's database stayed taken for ${Math.round((now - started) / 1000)} s`,
				);
			}
			await sleep(delay + Math.floor(Math.random() * delay));
			delay = Math.min(delay * 2, lockTiming.pollMaxMs);
		}
	}

	/** The first INSERT of the row: true when this process took the lock, false when another did first. */
	private async tryInsert(now: number, prepare: () => Promise<unknown>): Promise<boolean> {
		const entries = entriesFor(now);
		let fresh: unknown[];
		try {
			fresh = (await this.helpers.checkProcessedAndRecord(entries, 'workflow', { mode: 'entries' }))
				.new;
		} catch (error) {
			// Only the primary-key collision of two first inserts is a lost race: no other failure is repeated.
			if (isPrimaryKeyCollision(error)) return false;
			throw asLockError(error);
		}
		if (!fresh.includes(LOCK)) return false;
		const [count] = await Promise.all([
			this.store(
				async () => await this.helpers.getProcessedDataCount('workflow', { mode: 'entries' }),
			),
			prepare(),
		]);
		// Deleted under this process: not held; look again.
		if (count === 0) return false;
		// A process that saw no row just before this insert, and checked its own entries a tick of the clock later,
		// finds this row and writes it back with its newer stamps added (n8n writes back the union). The lock is
		// still this process's (LOCK was new to it alone) and only looks younger; giving it up here would leave
		// those stamps behind, a row no lock can be read from. More entries than any lock has: another node's.
		if (count <= lockTiming.slots + 1) return true;
		// Appended to another node's row (its history arrived at this instant): not ours to delete.
		await this.store(
			async () => await this.helpers.removeProcessed(entries, 'workflow', { mode: 'entries' }),
		);
		throw new LockError('conflict', conflictMessage);
	}

	/**
	 * Deletes a lock whose holder died. It must be ours (it holds LOCK): a row without it is another node's. Two
	 * waiters breaking the same dead lock at the same instant could delete the lock the quicker one took after its
	 * break: the narrow window docs/how-it-works.md names.
	 */
	private async breakStale(): Promise<void> {
		const { new: fresh } = await this.store(
			async () =>
				await this.helpers.checkProcessedAndRecord([LOCK], 'workflow', { mode: 'entries' }),
		);
		if (fresh.length > 0) {
			await this.store(
				async () => await this.helpers.removeProcessed([LOCK], 'workflow', { mode: 'entries' }),
			);
			throw new LockError('conflict', conflictMessage);
		}
		await this.store(
			async () => await this.helpers.clearAllProcessedItems('workflow', { mode: 'entries' }),
		);
	}

	private async release(): Promise<void> {
		// The work is done and written: a lock that cannot be deleted is broken by a waiter when its lease ends.
		await this.helpers
			.clearAllProcessedItems('workflow', { mode: 'entries' })
			.catch(() => undefined);
	}

	private async store<T>(call: () => Promise<T>): Promise<T> {
		try {
			return await call();
		} catch (error) {
			throw asLockError(error);
		}
	}
}

/** Any failure of the store as a LockError: a Remove Duplicates row's mode error is a conflict. */
export function asLockError(error: unknown): LockError {
	if (error instanceof LockError) return error;
	if (isModeConflict(error)) return new LockError('conflict', conflictMessage, error);
	return new LockError('store', storeMessage(error), error);
}

export function storeMessage(error: unknown): string {
	return (error as Error)?.message ?? String(error);
}
