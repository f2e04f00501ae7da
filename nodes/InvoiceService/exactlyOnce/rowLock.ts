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
/**
 * Identity entries: one of IDS of each of three families (a lock's identity, checked after a grace, and by a failed
 * INSERT's clean-up): two takers at one instant, or a failed INSERT and the lock it finds, share one in a billion.
 * With two families of 100 (until 2026-12-07) one pair in 10,000 did: swarm seed 68008's clean-up deleted another
 * process's lock of the same identity and count.
 */
const IDS = 1000;
const idA = (n: number) => `${LOCK} a${n}`;
const idB = (n: number) => `${LOCK} b${n}`;
const idE = (n: number) => `${LOCK} e${n}`;
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
/**
 * Taker stamps: a take-over adds TAKER_STAMPS of them (one of TAKERS each, at random) besides its identity, so that a
 * take-over grows the row by more than any mark (a mark adds 2): a waiter tells a mark (its lease runs on) from a
 * take-over (a new holder, maybe: its lease starts again).
 */
const TAKERS = 1000;
const TAKER_STAMPS = 10;
const takerStamp = (n: number) => `${LOCK} t${n}`;
/** The most a row grows between two looks by marks alone (two waiters' marks): more is a take-over. */
const MARKS_GROWTH = 4;
const OURS = [LOCK, ...all(SLOTS, stamp), ...all(IDS, idA), ...all(IDS, idB), ...all(IDS, idE)];
OURS.push(...all(MARKS, markC), ...all(MARKS, markD), ...all(TAKERS, takerStamp));

const ENTRIES = { mode: 'entries' } as const;

/**
 * An attempt that wrote this process's identity into the lock's row: `certain` when it was the row's INSERT;
 * else held only if the row still holds it, with `expected` entries, after the grace.
 */
type Taking = { certain: true } | { certain: false; identity: string[]; expected: number };

/**
 * What a waiter has seen of the lock: the count it watches, since when, and its last look (own clock); `marker`:
 * the entries it added to that lock's row, from `since` on (the row has not been deleted while they are there).
 */
interface Watch {
	count: number;
	since: number;
	last: number;
	marker?: string[];
	/** This process's take-overs of this lock lost with its identity in the row (takeOverWatched). */
	collisions?: number;
	/** The count at the watch's start (its growth since: about two entries a waiter). */
	first: number;
	/** How long the last look took (the taker's jitter grows with it). */
	lookMs: number;
	/**
	 * The count changed since this waiter's mark: its lease runs graceMs longer (a write read before a DELETE lands
	 * within the grace after the next INSERT: the hold it hides began at most that long before the change was seen).
	 */
	changedSinceMark?: boolean;
	/** When this waiter marks: markAfterMs and up to half of it more, at random (marks at one instant overwrite
	 * each other: n8n writes the row back whole). */
	markAfterMs: number;
}

/** A confirmed taking's time; undefined when not held (a collision too). */
const held = (outcome: number | { collided: number } | undefined) =>
	typeof outcome === 'number' ? outcome : undefined;

/** One process's hold of a workflow's lock at a time; the database lock orders the processes. */
const local = new Map<string, Promise<void>>();

/**
 * What a process has watched of each workflow's lock, by its turns map (one per process): the next waiter of the
 * process goes on with it, and so marks a lock at most once (issue 51: every new waiter's mark changed the count,
 * which starts every waiter's lease again, and a dead lock with claims arriving was never taken over).
 */
const watchesOf = new WeakMap<Map<string, Promise<void>>, Map<string, Watch>>();

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
							`n8n's database was too slow: checking the Idempotency Keys took more than ${this.timing.writeMs / 1000} s, and nothing is written after that`,
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
		let watches = watchesOf.get(this.turns);
		if (!watches) watchesOf.set(this.turns, (watches = new Map()));
		let watch = watches.get(this.workflowId);
		for (let looks = 0; ; looks++) {
			const sentAt = this.clock.now();
			const count = await this.count();
			// An earlier waiter's watch goes on only if the lock is as it left it: what changed while no one here looked
			// is not known (a hand-over, a take-over), so its marker and lease are not trusted then.
			if (looks === 0 && watch?.count !== count) watch = undefined;
			watch = this.watched(watch, count, sentAt);
			const step = await this.next(prepare, count, watch);
			if (step.taken !== undefined) {
				watches.delete(this.workflowId);
				return step.taken;
			}
			watch = step.watch;
			if (watch) watches.set(this.workflowId, watch);
			else watches.delete(this.workflowId);
			if (this.waitedOut(started, watch)) {
				throw new LockError(
					'busy',
					`the Idempotency Keys of this workflow stayed busy in n8n's database for ${Math.round((this.clock.now() - started) / 1000)} s`,
				);
			}
			await this.clock.sleep(delay + Math.floor(this.clock.random() * delay));
			delay = Math.min(delay * 2, this.timing.pollMaxMs);
		}
	}

	/**
	 * Whether a claim has waited long enough to fail: maxWaitMs, or, for a waiter that marked the lock, until its
	 * lease has run and it took over (a dead lock is taken over by the waiters that watched it, not left to the next
	 * ones, which would start their watch anew), at most two more rounds of a lease (a change seen after the mark
	 * lengthens it by a grace), the longest jitter and the grace (takers at one instant all lose, and take over again).
	 */
	private waitedOut(started: number, watch: Watch | undefined): boolean {
		const { maxWaitMs, leaseMs, breakJitterMaxMs, graceMs } = this.timing;
		const now = this.clock.now();
		const waited = now - started;
		if (waited <= maxWaitMs) return false;
		const leaseRuns =
			watch?.marker !== undefined && now - watch.since < this.leaseMs(watch) + breakJitterMaxMs;
		return !leaseRuns || waited > maxWaitMs + 2 * (leaseMs + breakJitterMaxMs + 2 * graceMs);
	}

	/** How long a marked waiter watches the count unchanged before it takes the lock over. */
	private leaseMs(watch: Watch): number {
		return this.timing.leaseMs + (watch.changedSinceMark ? this.timing.graceMs : 0);
	}

	/**
	 * The watch after a look that found `count` entries (sent at `sentAt`); none when there is no row (no lock, and
	 * no marker of this process's either).
	 */
	private watched(watch: Watch | undefined, count: number, sentAt: number): Watch | undefined {
		const now = this.clock.now();
		const lookMs = now - sentAt;
		if (count === 0) return undefined;
		// No look vouches for the time before it (a waiter may pause, or its looks wait for connections): the mark is
		// a write, and the lease counts from it, while the marker is there the row was never deleted, and a lock's row
		// only grows, so an unchanged count is the same hold however far apart the looks (issue 51: a waiter whose
		// looks each took over 2 s never marked).
		if (!watch) {
			const markAfterMs = this.timing.markAfterMs * (1 + this.clock.random() / 2);
			return { count, since: now, last: now, first: count, lookMs, markAfterMs };
		}
		if (watch.count === count) return { ...watch, last: now, lookMs };
		// Before this waiter's mark, others' marks (2 entries each) let the time to its mark run on (each waiter
		// restarting it on each other's mark, a dozen waiters marked one after another, 8 s apart, and none marked); a
		// take-over (its identity and 10 taker stamps) starts it again, as does a row that shrank (a write landing over
		// another), so that no mark lands within a taker's grace. Once marked, any change starts the lease again, and
		// longer (changedSinceMark): a write read from a lock's row before its DELETE and landing after the next INSERT
		// puts the old row back over the new lock, this waiter's marker with it, and hides the new hold under the old
		// count and the write's entries (swarm seed 87315: the lease ran on and took a live hold over); with the same
		// count as seen before, the change this waiter saw was after that read. A process marks a lock once, so a
		// lease starts again about once per process watching. The marker stays, so that waiters' marks do not wipe
		// out each other's.
		const growth = count - watch.count;
		if (watch.marker !== undefined) {
			return { ...watch, count, since: now, last: now, lookMs, changedSinceMark: true };
		}
		const marks = growth > 0 && growth <= MARKS_GROWTH;
		return { ...watch, count, since: marks ? watch.since : now, last: now, lookMs };
	}

	/**
	 * The longest random wait before this waiter takes over (and again after each collision, doubled): long enough
	 * that the waiters of the moment (about one for two entries the row grew by while watched) rarely look and write
	 * within each other's take-over (three queries, each about as long as the last look), at least breakJitterMs and
	 * at most breakJitterMaxMs.
	 */
	private jitterMs(watch: Watch): number {
		const waiters = 1 + Math.max(0, watch.count - watch.first) / 2;
		const window = 3 * watch.lookMs;
		const spread = 4 * waiters * window * 2 ** Math.min(watch.collisions ?? 0, 5);
		return Math.min(this.timing.breakJitterMaxMs, Math.max(this.timing.breakJitterMs, spread));
	}

	/** What a look leads to: the lock taken (its time), or the watch to go on with. */
	private async next(
		prepare: () => Promise<unknown>,
		count: number,
		watch: Watch | undefined,
	): Promise<{ taken?: number; watch?: Watch }> {
		const now = this.clock.now();
		if (!watch) return { taken: await this.taken(prepare, () => this.tryInsert()) };
		if (!watch.marker) {
			if (now - watch.since < watch.markAfterMs) return { watch };
			const markedAt = this.clock.now();
			const marked = await this.mark();
			// No LOCK in the row: told apart by the take-over (never 'not watched' without a marker).
			if (marked === 'no lock') {
				const attempt = async () => {
					await this.clock.sleep(Math.floor(this.clock.random() * this.timing.breakJitterMs));
					const taking = await this.takeOver(count);
					return taking === 'not watched' || taking === 'changed' ? undefined : taking;
				};
				return { taken: await this.taken(prepare, attempt) };
			}
			// The row was gone: the mark's check inserted a lock, this process's.
			if (marked && 'certain' in marked) {
				return { taken: held(await this.confirmed(prepare, marked, markedAt)) };
			}
			if (!marked) return {};
			const at = this.clock.now();
			const after = { ...watch, count: count + marked.added, since: at, last: at };
			return { watch: { ...after, marker: marked.marker } };
		}
		if (now - watch.since < this.leaseMs(watch)) return { watch };
		return await this.takeOverWatched(prepare, count, { ...watch, marker: watch.marker });
	}

	/**
	 * Takes over the lock watched, marked, for the lease. Changed before the write, or lost to another taker: the
	 * marker is still there (the row was never deleted), and the lease starts again (dropping it, a waiter marked
	 * anew, and its mark made the taker that won lose too). Lost with its identity in the row and more besides:
	 * every taker of that moment lost (each finds the others' identities), so the lock is taken over again after a
	 * random wait (jitterMs) that doubles with each such loss, not a lease later (issue 51: a dozen waiters, their leases run
	 * out at the same change, took over together again and again).
	 */
	private async takeOverWatched(
		prepare: () => Promise<unknown>,
		count: number,
		watch: Watch & { marker: string[] },
	): Promise<{ taken?: number; watch?: Watch }> {
		await this.clock.sleep(Math.floor(this.clock.random() * this.jitterMs(watch)));
		const sentAt = this.clock.now();
		const taking = await this.takeOver(count, watch.marker);
		// The marker was not there: the row was deleted and taken again, or two writes at one instant overwrote it
		// (n8n writes the row back whole). The write put it back: the lease starts again from it.
		if (taking === 'not watched') {
			const at = this.clock.now();
			return { watch: { ...watch, count: -1, since: at, last: at, changedSinceMark: false } };
		}
		// Changed since the last look: the next look tells a mark (taken over then) from a take-over (a lease again).
		if (taking === 'changed') return { watch };
		const outcome = taking ? await this.confirmed(prepare, taking, sentAt) : undefined;
		if (typeof outcome === 'number') return { taken: outcome };
		const at = this.clock.now();
		if (outcome === undefined) {
			return { watch: { ...watch, count: -1, since: at, last: at, changedSinceMark: false } };
		}
		// Taken over again once the next look finds the count the collision left (the jitter first, doubled).
		const collisions = (watch.collisions ?? 0) + 1;
		const since = at - this.timing.leaseMs;
		return {
			watch: {
				...watch,
				count: outcome.collided,
				since,
				last: at,
				collisions,
				changedSinceMark: false,
			},
		};
	}

	/** Runs one attempt to take the lock, then `prepare` with the lock's last check (confirmed). */
	private async taken(
		prepare: () => Promise<unknown>,
		attempt: () => Promise<Taking | undefined>,
	): Promise<number | undefined> {
		const sentAt = this.clock.now();
		const taking = await attempt();
		return taking ? held(await this.confirmed(prepare, taking, sentAt)) : undefined;
	}

	/**
	 * Whether a taking sent at `sentAt` holds the lock (then `prepare` runs, and the time is returned); `collided`:
	 * a take-over whose identity is in the row with more besides (another taker's, or a waiter's mark), with the
	 * count it found. A failure once the lock may be this process's gives it back (a lock left taken would stall
	 * every worker for the lease).
	 */
	private async confirmed(
		prepare: () => Promise<unknown>,
		taking: Taking,
		sentAt: number,
	): Promise<number | { collided: number } | undefined> {
		let held = taking.certain;
		try {
			if (taking.certain) {
				const [count] = await Promise.all([this.count(), prepare()]);
				// Deleted under this process (an unlock that came too late): not held; look again. Any other count is this
				// lock: the row was inserted by this process and no one deletes a row but its holder (a DELETE landing past
				// delete-late could put another's lock there, docs/how-it-works.md's bounds). Asking its identity instead
				// left locks no one held when a waiter's mark, read before the INSERT, wrote the old row back over it (a
				// queue-mode storm waited minutes for the lease).
				if (count === 0) return undefined;
				return sentAt;
			}
			// Not this process's alone for certain (another may have written the same row at the same time): held
			// only if, after the grace, the row holds its identity and nothing more than its own write added.
			await this.clock.sleep(this.timing.graceMs);
			const verdict = await this.stillMine(taking.identity, taking.expected);
			if (verdict !== 'mine') return verdict === 'not mine' ? undefined : { collided: verdict };
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
		if (answer.new === entries) return { certain: true };
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
		if (answer.new === entries) return { certain: true };
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
	private async takeOver(
		watched: number,
		marker?: string[],
	): Promise<Taking | 'not watched' | 'changed' | undefined> {
		if ((await this.count()) !== watched) return 'changed';
		const identity = this.identity();
		const stamps = Array.from({ length: TAKER_STAMPS }, () =>
			takerStamp(1 + Math.floor(this.clock.random() * TAKERS)),
		);
		// The marker and the identity in one write: the fewer queries between the last look and the write, the fewer
		// waiters take over at the same moment (both then lose, and the lock waits a lease more).
		const entries = [LOCK, ...(marker ?? []), ...identity, ...stamps];
		const answer = await this.checkUnlessInserted(entries);
		if (!answer) return undefined;
		// Gone meanwhile: inserted with LOCK, a lock of this process's.
		if (answer.new === entries) return { certain: true };
		// Deleted and taken again since the mark (the marker is not there): not the lock watched.
		if (marker?.some((entry) => answer.new.includes(entry))) return 'not watched';
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
			idE(1 + Math.floor(this.clock.random() * IDS)),
		];
	}

	/**
	 * Whether the row still holds this lock's identity and has `expected` entries (no other process added to it);
	 * the count found when it holds the identity with more besides. Checking adds what is missing: to another
	 * process's lock (its count changes, nothing else); a row gone is inserted by the check as a lock of this
	 * process's (LOCK and its identity): held for certain.
	 */
	private async stillMine(
		identity: string[],
		expected: number,
	): Promise<'mine' | 'not mine' | number> {
		// Counted first: if the identity is found after, the row is the one written, and so is the count (seed 28460).
		const count = await this.count();
		const items = [LOCK, ...identity];
		const answer = await this.checkUnlessInserted(items);
		if (!answer) return 'not mine';
		if (answer.new === items) return 'mine';
		if (answer.processed.length !== items.length) return 'not mine';
		return count === expected ? 'mine' : count;
	}

	/**
	 * After a failed INSERT (sent at `sentAt`): deletes this process's lock when the row is it (its identity, and no
	 * more entries than it wrote: a failed write into another process's lock added to that lock, which is not this
	 * one's). No row: nothing written, nothing to delete, and nothing is written to find out.
	 */
	private async removeIfMine(identity: string[], written: number, sentAt: number): Promise<void> {
		if ((await this.count()) === 0) return;
		if ((await this.stillMine(identity, written)) === 'mine') await this.unlock(sentAt);
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
