import type { IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

/**
 * A mutex across n8n processes on the workflow's row of n8n's processed-data store (scope "workflow", context
 * ''), taken around every read-modify-write of a node's Idempotency Key row (docs/how-it-works.md, "Idempotency
 * Keys across processes"). n8n gives a node no transaction and no conditional write; its one atomic step is the
 * first INSERT of a row: `checkProcessedAndRecord` inserts when the row is absent (and then answers with the very
 * array it was given), and a second INSERT fails on the primary key. Acquire = that INSERT; release = a DELETE
 * (`clearAllProcessedItems`).
 *
 * No decision compares one process's clock with another's: every age is measured on the deciding process's own
 * monotonic clock. A waiter breaks a lock only after it has watched the same lock, unchanged, for the lease; a lock
 * is told from the next one by its entry count (a random number of stamps per acquisition). A holder writes only
 * within a part of the lease counted from before its INSERT, so a waiter's break comes after its last write.
 * Where two waiters break one dead lock at once, the late delete may hit the next holder's lock: a process that
 * saw the dead lock takes the lock only after a grace period, and only if its own identity entries are still in
 * the row. docs/how-it-works.md names what remains (a query delayed past these margins).
 */

export type LockHelpers = Pick<
	IExecuteFunctions['helpers'],
	'checkProcessedAndRecord' | 'clearAllProcessedItems' | 'getProcessedDataCount' | 'removeProcessed'
>;

/** One process's time and randomness (the simulation gives each process its own). */
export interface Clock {
	/** Monotonic milliseconds: compared only with this process's own readings. */
	now(): number;
	sleep(ms: number): Promise<void>;
	random(): number;
}

export const systemClock: Clock = {
	now: () => performance.now(),
	sleep: async (ms) => await sleep(ms),
	random: () => Math.random(),
};

/** The limits of a hold and of a wait (tests shorten them). */
export const lockTiming = {
	/** A waiter that has watched one lock unchanged this long breaks it: its holder died (or hangs). */
	leaseMs: 60_000,
	/** A holder writes only this long after it sent its INSERT (the rest of the lease covers a slow query). */
	writeMs: 20_000,
	/** A holder deletes its lock only this long after its INSERT; past it, the lock is left to the waiters' lease. */
	releaseMs: 30_000,
	/** Looks further apart than this (a paused waiter) do not count as watching: the watch starts again. */
	gapMs: 2_000,
	/** A waiter that saw a lock stay this long and then vanish treats it as broken (see `graceMs`). */
	witnessMs: 5_000,
	/** How long a taker that saw a lock broken waits before it checks that the lock is still its own. */
	graceMs: 2_000,
	/** A breaker waits up to this long (at random) and looks again, so that two waiters rarely break at once. */
	breakJitterMs: 1_000,
	/** How long a claim waits for the lock before its item fails with nothing sent. */
	maxWaitMs: 90_000,
	/**
	 * Polling interval bounds (with jitter). A hold takes a few round trips to the database: a waiter that looks
	 * every 50 ms at most takes the lock soon after it is given back (one small read of the lock's row a look).
	 */
	pollMinMs: 5,
	pollMaxMs: 50,
};

const LOCK = 'invoice-service idempotency lock';
/** Stamps 1..SLOTS: a lock holds a random prefix of them, so that its count tells it from the next lock. */
const SLOTS = 60;
const stamp = (n: number) => `${LOCK} ${n}`;
/** Identity entries: one of IDS of each family (a lock's identity, checked after a grace). */
const IDS = 100;
const idA = (n: number) => `${LOCK} a${n}`;
const idB = (n: number) => `${LOCK} b${n}`;
/** Every entry a lock of this package can hold: a row made only of these is a lock's (or its remains). */
const OURS = [
	LOCK,
	...Array.from({ length: SLOTS }, (_, index) => stamp(index + 1)),
	...Array.from({ length: IDS }, (_, index) => idA(index + 1)),
	...Array.from({ length: IDS }, (_, index) => idB(index + 1)),
];

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

const conflictMessage =
	"The workflow's entry in n8n's processed-data store is used by another node (a Remove Duplicates node with Scope: Workflow?)";

const ENTRIES = { mode: 'entries' } as const;

/** What a waiter has seen of the lock: the count it watches, since when, and its last look (own clock). */
interface Watch {
	count: number;
	since: number;
	last: number;
}

/** One process's hold of a workflow's lock at a time; the database lock orders the processes. */
const local = new Map<string, Promise<void>>();

export class RowLock {
	constructor(
		private readonly workflowId: string,
		private readonly helpers: LockHelpers,
		private readonly clock: Clock = systemClock,
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
					if (this.clock.now() - acquiredAt >= lockTiming.writeMs) {
						throw new LockError(
							'busy',
							`n8n's database was too slow: the Idempotency Key lock was held past ${lockTiming.writeMs / 1000} s, and is not written in after that`,
						);
					}
				});
			} finally {
				await this.release(acquiredAt);
			}
		} finally {
			done();
			if (local.get(this.workflowId) === queued) local.delete(this.workflowId);
		}
	}

	/** Takes the lock (and runs `prepare` once it is taken); the time its INSERT was sent. */
	private async acquire(prepare: () => Promise<unknown>): Promise<number> {
		const started = this.clock.now();
		let delay = lockTiming.pollMinMs;
		let watch: Watch | undefined;
		// Whether this waiter saw a lock broken (or could not watch): its own lock then waits out a grace period.
		let sawBreak = false;
		for (;;) {
			const count = await this.count();
			const now = this.clock.now();
			if (watch && now - watch.last > lockTiming.gapMs) {
				// Paused between two looks: what happened meanwhile is unknown.
				sawBreak = true;
				watch = undefined;
			}
			if (!watch || watch.count !== count) {
				// A lock that stayed long and then changed may have been broken; a probed row is being broken.
				if (watch && watch.count > 0 && now - watch.since >= lockTiming.witnessMs) sawBreak = true;
				if (count >= OURS.length) sawBreak = true;
				watch = { count, since: now, last: now };
			}
			watch.last = now;
			if (count === 0) {
				const acquiredAt = await this.tryInsert(prepare, sawBreak);
				if (acquiredAt !== undefined) return acquiredAt;
			} else if (now - watch.since >= lockTiming.leaseMs) {
				if (await this.breakDead(count)) sawBreak = true;
				watch = undefined;
				continue;
			}
			if (this.clock.now() - started > lockTiming.maxWaitMs) {
				throw new LockError(
					'busy',
					`The Idempotency Key lock of this workflow in n8n's database stayed taken for ${Math.round((this.clock.now() - started) / 1000)} s`,
				);
			}
			await this.clock.sleep(delay + Math.floor(this.clock.random() * delay));
			delay = Math.min(delay * 2, lockTiming.pollMaxMs);
		}
	}

	/**
	 * The first INSERT of the row: the time it was sent when this process took the lock, undefined when another
	 * did. A failure after it leaves nothing of this process's behind (its lock is deleted when it is there).
	 */
	private async tryInsert(
		prepare: () => Promise<unknown>,
		sawBreak: boolean,
	): Promise<number | undefined> {
		const a = 1 + Math.floor(this.clock.random() * IDS);
		const b = 1 + Math.floor(this.clock.random() * IDS);
		const stamps = 1 + Math.floor(this.clock.random() * SLOTS);
		const entries = [
			LOCK,
			idA(a),
			idB(b),
			...Array.from({ length: stamps }, (_, index) => stamp(index + 1)),
		];
		const identity = [idA(a), idB(b)];
		const sentAt = this.clock.now();
		let answer: { new: unknown[] };
		try {
			answer = await this.helpers.checkProcessedAndRecord(entries, 'workflow', ENTRIES);
		} catch (error) {
			// Only the primary-key collision of two first inserts is a lost race. Anything else may have been written
			// before it failed: this process's lock is taken out again when it is there.
			if (isPrimaryKeyCollision(error)) return undefined;
			await this.removeIfMine(identity).catch(() => undefined);
			throw asLockError(error);
		}
		// n8n answers an INSERT with the array it was given; an UPDATE (the row was there) with a new one.
		const inserted = answer.new === entries;
		if (!inserted && !answer.new.includes(LOCK)) return undefined; // another process's lock
		try {
			if (!inserted || sawBreak) {
				// Not certainly this process's alone: an UPDATE of an empty row (two can make it), or a lock taken just
				// after a break (a second breaker's late delete may still land). Held only if it survives the grace.
				await this.clock.sleep(lockTiming.graceMs);
				if (!(await this.stillMine(identity))) return undefined;
				await prepare();
				return sentAt;
			}
			const [count] = await Promise.all([this.count(), prepare()]);
			// Deleted under this process (a late delete of a break): not held; look again.
			if (count === 0) return undefined;
			return sentAt;
		} catch (error) {
			await this.release(sentAt);
			throw asLockError(error);
		}
	}

	/**
	 * Whether the row still holds this lock's identity entries. Checking adds what is missing: into another
	 * process's lock (its count changes, nothing else), or as a row of its own when the row is gone (deleted here).
	 */
	private async stillMine(identity: string[]): Promise<boolean> {
		const answer = await this.store(
			async () => await this.helpers.checkProcessedAndRecord(identity, 'workflow', ENTRIES),
		);
		if (answer.new === identity) {
			await this.store(async () => await this.helpers.clearAllProcessedItems('workflow', ENTRIES));
			return false;
		}
		return answer.processed.length === identity.length;
	}

	/** After a failed INSERT: deletes this process's lock when the row holds it. */
	private async removeIfMine(identity: string[]): Promise<void> {
		if (await this.stillMine(identity)) {
			await this.helpers.clearAllProcessedItems('workflow', ENTRIES);
		}
	}

	/**
	 * Deletes a lock watched unchanged for the lease (its holder died), after a random pause and a last look. A row
	 * with entries that no lock of this package writes is another node's: left as it was, and refused. True when
	 * this process deleted the row.
	 */
	private async breakDead(watched: number): Promise<boolean> {
		await this.clock.sleep(Math.floor(this.clock.random() * lockTiming.breakJitterMs));
		if ((await this.count()) !== watched) return false;
		const probe = await this.store(
			async () => await this.helpers.checkProcessedAndRecord(OURS, 'workflow', ENTRIES),
		);
		if (probe.new === OURS) {
			// Gone meanwhile: the probe made a row of its own, deleted at once.
			await this.deleteRow();
			return false;
		}
		const after = await this.count();
		if (after > OURS.length) {
			// Entries of another kind: another node's row. What the probe added is taken out again.
			await this.store(
				async () => await this.helpers.removeProcessed(probe.new, 'workflow', ENTRIES),
			);
			throw new LockError('conflict', conflictMessage);
		}
		if (after !== OURS.length) return false; // deleted, or taken, meanwhile
		await this.deleteRow();
		return true;
	}

	private async deleteRow(): Promise<void> {
		await this.store(async () => await this.helpers.clearAllProcessedItems('workflow', ENTRIES));
	}

	/**
	 * Gives the lock back. Past `releaseMs` after its INSERT it is left to the waiters' lease: a delete that late
	 * could land after a waiter broke the lock and another process took it.
	 */
	private async release(acquiredAt: number): Promise<void> {
		if (this.clock.now() - acquiredAt >= lockTiming.releaseMs) return;
		// The work is done and written: a lock that cannot be deleted is broken by a waiter when its lease ends.
		await this.helpers.clearAllProcessedItems('workflow', ENTRIES).catch(() => undefined);
	}

	private async count(): Promise<number> {
		return await this.store(
			async () => await this.helpers.getProcessedDataCount('workflow', ENTRIES),
		);
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
