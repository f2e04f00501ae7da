import type { IDeduplicationOutput, IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { asLockError, conflictMessage, isPrimaryKeyCollision, LockError } from './lockErrors';
import { KEYS_TIMING, type LockTiming } from './timing';

/**
 * A mutex across n8n processes on the workflow's row of n8n's processed-data store (scope "workflow", context
 * ''), taken around every read-modify-write of a node's Idempotency Key row (docs/how-it-works.md, "Idempotency
 * Keys across processes"). n8n gives a node no transaction and no conditional write; its one atomic step is the
 * first INSERT of a row: `checkProcessedAndRecord` inserts when the row is absent (and then answers with the very
 * array it was given), and a second INSERT fails on the primary key. Acquire = that INSERT; unlock = a DELETE
 * (`clearAllProcessedItems`).
 *
 * No decision compares one process's clock with another's: every age is measured on the deciding process's own
 * monotonic clock. A waiter takes over a lock only after it has watched it unchanged: its entry count (random
 * stamps per acquisition) for markAfterMs, then for the lease with a marker of its own in the row (still there: the
 * row was never deleted, so two holds in a row with the same count are told apart, and the holder took the lock
 * before the mark). It adds its identity to the row, never deletes it: only a holder deletes its own lock. A
 * take-over (and an empty row, which n8n takes by an UPDATE) is not atomic: the taker holds only if, after a grace
 * period, the row holds its identity and no entry besides its own write. A holder writes only within writeMs of
 * taking the lock and deletes it only within releaseMs. docs/how-it-works.md names what remains (a late query).
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

const LOCK = 'invoice-service idempotency lock';
/** Stamps 1..SLOTS: a lock holds a random prefix of them, so that its count tells it from the next lock. */
const SLOTS = 60;
const stamp = (n: number) => `${LOCK} ${n}`;
/** Identity entries: one of IDS of each family (a lock's identity, checked after a grace). */
const IDS = 100;
const idA = (n: number) => `${LOCK} a${n}`;
const idB = (n: number) => `${LOCK} b${n}`;
/**
 * Marker entries: a waiter's mark is one of MARKS of each family (one in a million: with the count watched too, one
 * lock is told from the next). Bounded, so that a row of marks and stamps alone is still known as this package's.
 */
const MARKS = 1000;
const markC = (n: number) => `${LOCK} c${n}`;
const markD = (n: number) => `${LOCK} d${n}`;
const all = (count: number, entry: (n: number) => string) =>
	Array.from({ length: count }, (_, index) => entry(index + 1));
/** Every entry a lock of this package can hold: a row made only of these is a lock's (or its remains). */
const OURS = [LOCK, ...all(SLOTS, stamp), ...all(IDS, idA), ...all(IDS, idB), ...all(MARKS, markC)];
OURS.push(...all(MARKS, markD));

const ENTRIES = { mode: 'entries' } as const;

/**
 * An attempt that wrote this process's identity into the lock's row: `certain` when it was the row's INSERT;
 * else held only if the row still holds it, with `expected` entries, after the grace.
 */
type Taking =
	| { certain: true; identity: string[]; written: number }
	| { certain: false; identity: string[]; expected: number };

/**
 * What a waiter has seen of the lock: the count it watches, since when, and its last look (own clock); `marker`:
 * the entries it added to that lock's row, from `since` on (the row has not been deleted while they are there).
 */
interface Watch {
	count: number;
	since: number;
	last: number;
	marker?: string[];
}

/** One process's hold of a workflow's lock at a time; the database lock orders the processes. */
const local = new Map<string, Promise<void>>();

export class RowLock {
	constructor(
		private readonly workflowId: string,
		private readonly helpers: LockHelpers,
		private readonly clock: Clock = systemClock,
		/** This process's turns at each workflow's lock (the simulation gives each of its processes its own). */
		private readonly turns: Map<string, Promise<void>> = local,
		private readonly timing: LockTiming = KEYS_TIMING.lock,
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
		const turns = this.turns;
		const before = turns.get(this.workflowId) ?? Promise.resolve();
		let done!: () => void;
		const mine = new Promise<void>((resolve) => (done = resolve));
		const queued = before.then(async () => await mine);
		turns.set(this.workflowId, queued);
		try {
			await before;
			const acquiredAt = await this.acquire(prepare);
			try {
				return await work(() => {
					if (this.clock.now() - acquiredAt >= this.timing.writeMs) {
						throw new LockError(
							'busy',
							`n8n's database was too slow: the Idempotency Key lock was held past ${this.timing.writeMs / 1000} s, and is not written in after that`,
						);
					}
				});
			} finally {
				await this.unlock(acquiredAt);
			}
		} finally {
			done();
			if (turns.get(this.workflowId) === queued) turns.delete(this.workflowId);
		}
	}

	/** Takes the lock (and runs `prepare` once it is taken); the time its taking was sent. */
	private async acquire(prepare: () => Promise<unknown>): Promise<number> {
		const started = this.clock.now();
		let delay = this.timing.pollMinMs;
		let watch: Watch | undefined;
		for (;;) {
			const sentAt = this.clock.now();
			const count = await this.count();
			const now = this.clock.now();
			// Before the mark, a look sent long after the last one answered (this process paused) does not vouch for what
			// happened between them: the watch starts again. A slow answer is no such gap (a waiter whose queries each
			// wait seconds for a connection must still mark, issue 51). Once marked, the marker vouches: while it is there
			// the row was never deleted, and a lock's row only grows, so an unchanged count is the same hold. A change
			// (another waiter's mark, a taker's identity) starts the lease again from when it was seen; the marker stays,
			// so that waiters' marks do not wipe out each other's.
			const paused = !watch?.marker && watch !== undefined && sentAt - watch.last > this.timing.gapMs;
			if (!watch || watch.count !== count || paused) {
				watch = { count, since: now, last: now, marker: watch?.marker };
			}
			watch.last = now;
			let taken: number | undefined;
			// The count alone cannot tell two holds in a row apart (issue 42): the lease counts from the waiter's mark.
			if (count === 0) taken = await this.taken(prepare, () => this.tryInsert());
			else if (!watch.marker && now - watch.since >= this.timing.markAfterMs) {
				const markedAt = this.clock.now();
				const marked = await this.mark();
				if (marked === 'no lock') {
					taken = await this.taken(prepare, () => this.takeOver(count));
					watch = undefined;
				} else if (marked && 'certain' in marked) {
					// The row was gone: the mark's check inserted a lock, this process's.
					taken = await this.confirmed(prepare, marked, markedAt);
					watch = undefined;
				} else if (marked) {
					const at = this.clock.now();
					watch = { count: count + marked.added, since: at, last: at, marker: marked.marker };
				} else watch = undefined;
			} else if (watch.marker && now - watch.since >= this.timing.leaseMs) {
				const marker = watch.marker;
				taken = await this.taken(prepare, () => this.takeOver(count, marker));
				watch = undefined;
			}
			if (taken !== undefined) return taken;
			if (this.clock.now() - started > this.timing.maxWaitMs) {
				throw new LockError(
					'busy',
					`The Idempotency Key lock of this workflow in n8n's database stayed taken for ${Math.round((this.clock.now() - started) / 1000)} s`,
				);
			}
			await this.clock.sleep(delay + Math.floor(this.clock.random() * delay));
			delay = Math.min(delay * 2, this.timing.pollMaxMs);
		}
	}

	/** Runs one attempt to take the lock, then `prepare` with the lock's last check (confirmed). */
	private async taken(
		prepare: () => Promise<unknown>,
		attempt: () => Promise<Taking | undefined>,
	): Promise<number | undefined> {
		const sentAt = this.clock.now();
		const taking = await attempt();
		return taking ? await this.confirmed(prepare, taking, sentAt) : undefined;
	}

	/**
	 * Whether a taking sent at `sentAt` holds the lock (then `prepare` runs, and the time is returned). A failure
	 * once the lock may be this process's gives it back (a lock left taken would stall every worker for the lease).
	 */
	private async confirmed(
		prepare: () => Promise<unknown>,
		taking: Taking,
		sentAt: number,
	): Promise<number | undefined> {
		let held = taking.certain;
		try {
			if (taking.certain) {
				const [count] = await Promise.all([this.count(), prepare()]);
				// Deleted under this process (an unlock that came too late): not held; look again.
				if (count === 0) return undefined;
				// Exactly what the INSERT wrote: this lock. Anything else (a waiter's mark, or another lock after this one
				// was deleted by a DELETE landing late) is told by the identity, not taken for this lock by its count.
				if (count !== taking.written && !(await this.holdsIdentity(taking.identity))) {
					held = false;
					return undefined;
				}
				return sentAt;
			}
			// Not this process's alone for certain (another may have written the same row at the same time): held
			// only if, after the grace, the row holds its identity and nothing more than its own write added.
			await this.clock.sleep(this.timing.graceMs);
			if (!(await this.stillMine(taking.identity, taking.expected))) return undefined;
			held = true;
			await prepare();
			return sentAt;
		} catch (error) {
			if (held) await this.unlock(sentAt);
			throw asLockError(error);
		}
	}

	/** The first INSERT of the row (the count was 0). */
	private async tryInsert(): Promise<Taking | undefined> {
		const sentAt = this.clock.now();
		const identity = this.identity();
		const stamps = 1 + Math.floor(this.clock.random() * SLOTS);
		const entries = [
			LOCK,
			...identity,
			...Array.from({ length: stamps }, (_, index) => stamp(index + 1)),
		];
		let answer: { new: unknown[] };
		try {
			answer = await this.helpers.checkProcessedAndRecord(entries, 'workflow', ENTRIES);
		} catch (error) {
			// Only the primary-key collision of two first inserts is a lost race. Anything else may have been written
			// before it failed: this process's lock is taken out again when it is there.
			if (isPrimaryKeyCollision(error)) return undefined;
			await this.removeIfMine(identity, entries.length, sentAt).catch(() => undefined);
			throw asLockError(error);
		}
		// n8n answers an INSERT with the array it was given; an UPDATE (the row was there) with a new one.
		if (answer.new === entries) return { certain: true, identity, written: entries.length };
		// Another process's lock (its count only grows by this write); else an empty row, taken by a plain UPDATE.
		if (!answer.new.includes(LOCK)) return undefined;
		return { certain: false, identity, expected: answer.new.length };
	}

	/**
	 * Marks the lock watched so far with random entries of this waiter's (one of each marker family, MARKS): while
	 * they are there, the row has not been deleted, so it is the same hold's (or a take-over's, which changes the
	 * count). 'no lock': the row has no LOCK (an earlier version's remains, or another node's history: what this check
	 * added is taken out again, and the take-over tells which); a certain taking: the row was gone, and the check's
	 * INSERT made it a lock of this process's (never deleted unheld: a late DELETE could land on the next holder's
	 * lock, issue 51); undefined: another process inserted the row first (look again).
	 */
	private async mark(): Promise<
		{ marker: string[]; added: number } | Taking | 'no lock' | undefined
	> {
		const draw = () => 1 + Math.floor(this.clock.random() * MARKS);
		const marker = [markC(draw()), markD(draw())];
		const entries = [LOCK, ...marker];
		const answer = await this.checkUnlessInserted(entries);
		if (!answer) return undefined;
		if (answer.new === entries) return { certain: true, identity: marker, written: entries.length };
		if (answer.new.includes(LOCK)) {
			await this.store(
				async () => await this.helpers.removeProcessed(answer.new, 'workflow', ENTRIES),
			);
			return 'no lock';
		}
		return { marker, added: answer.new.length };
	}

	/**
	 * Takes over a lock watched unchanged for the lease (its holder died or hangs: it writes nothing after
	 * writeMs, and never deletes the row after releaseMs), after a random pause and a last look, by adding this
	 * process's identity to the row: no delete that could land on the next holder's lock. A row with entries no
	 * lock of this package writes is another node's: left as it was, and refused.
	 */
	private async takeOver(watched: number, marker?: string[]): Promise<Taking | undefined> {
		await this.clock.sleep(Math.floor(this.clock.random() * this.timing.breakJitterMs));
		if ((await this.count()) !== watched) return undefined;
		if (marker !== undefined) {
			// Deleted and taken again since the mark (the check then added the marker to the new lock): not the lock
			// watched. Gone: the check's INSERT (with LOCK) is a lock of this process's.
			const items = [LOCK, ...marker];
			const still = await this.checkUnlessInserted(items);
			if (!still) return undefined;
			if (still.new === items) return { certain: true, identity: marker, written: items.length };
			if (still.new.length > 0) return undefined;
		}
		const identity = this.identity();
		const entries = [LOCK, ...identity];
		const answer = await this.checkUnlessInserted(entries);
		if (!answer) return undefined;
		// Gone meanwhile: inserted, ours.
		if (answer.new === entries) return { certain: true, identity, written: entries.length };
		if (!answer.new.includes(LOCK)) {
			return { certain: false, identity, expected: watched + answer.new.length };
		}
		// A row without LOCK: the remains of an earlier version's lock (only stamps of this package), or another
		// node's history. Told apart by adding every entry a lock can hold: only another node's row grows past them.
		const probe = await this.check(OURS);
		const after = await this.count();
		if (after > OURS.length) {
			await this.store(
				async () =>
					await this.helpers.removeProcessed([...answer.new, ...probe.new], 'workflow', ENTRIES),
			);
			throw new LockError('conflict', conflictMessage);
		}
		// This package's remains: deleted (they hold no lock anyone can be in), and the lock is taken anew.
		await this.deleteRow();
		return undefined;
	}

	/** A random identity: one entry of each family. */
	private identity(): string[] {
		return [
			idA(1 + Math.floor(this.clock.random() * IDS)),
			idB(1 + Math.floor(this.clock.random() * IDS)),
		];
	}

	/**
	 * Whether the row still holds this lock's identity and has `expected` entries (no other process added to it).
	 * Checking adds what is missing: to another process's lock (its count changes, nothing else); a row gone is
	 * inserted by the check as a lock of this process's (LOCK and its identity): held for certain.
	 */
	private async stillMine(identity: string[], expected: number): Promise<boolean> {
		// Counted first: if the identity is found after, the row is the one written, and so is the count (seed 28460).
		const count = await this.count();
		const items = [LOCK, ...identity];
		const answer = await this.checkUnlessInserted(items);
		if (!answer) return false;
		if (answer.new === items) return true;
		return answer.processed.length === items.length && count === expected;
	}

	/** Whether the row holds this lock's identity (a check: it adds what is missing, as stillMine's). */
	private async holdsIdentity(identity: string[]): Promise<boolean> {
		const items = [LOCK, ...identity];
		const answer = await this.checkUnlessInserted(items);
		if (!answer) return false;
		return answer.new === items || answer.processed.length === items.length;
	}

	/**
	 * After a failed INSERT (sent at `sentAt`): deletes this process's lock when the row is it (its identity, and no
	 * more entries than it wrote: a failed write into another process's lock added to that lock, which is not this
	 * one's). No row: nothing written, nothing to delete, and nothing is written to find out.
	 */
	private async removeIfMine(identity: string[], written: number, sentAt: number): Promise<void> {
		if ((await this.count()) === 0) return;
		if (await this.stillMine(identity, written)) await this.unlock(sentAt);
	}

	/**
	 * Gives the lock back. Past `releaseMs` after its INSERT it is left to the waiters' lease: a delete that late
	 * could land after a waiter broke the lock and another process took it.
	 */
	private async unlock(acquiredAt: number): Promise<void> {
		if (this.clock.now() - acquiredAt >= this.timing.releaseMs) return;
		// The work is done and written: a lock that cannot be deleted is broken by a waiter when its lease ends.
		await this.helpers.clearAllProcessedItems('workflow', ENTRIES).catch(() => undefined);
	}

	/** A check of the lock's row (it records what it does not find). */
	private async check(items: string[]): Promise<IDeduplicationOutput> {
		return await this.store(
			async () => await this.helpers.checkProcessedAndRecord(items, 'workflow', ENTRIES),
		);
	}

	/**
	 * A check that may find the row gone and insert it; undefined when another process's INSERT came first (the
	 * primary key: a lock taken meanwhile, not a failure of n8n's database).
	 */
	private async checkUnlessInserted(items: string[]): Promise<IDeduplicationOutput | undefined> {
		try {
			return await this.helpers.checkProcessedAndRecord(items, 'workflow', ENTRIES);
		} catch (error) {
			if (isPrimaryKeyCollision(error)) return undefined;
			throw asLockError(error);
		}
	}

	private async deleteRow(): Promise<void> {
		await this.store(async () => await this.helpers.clearAllProcessedItems('workflow', ENTRIES));
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
