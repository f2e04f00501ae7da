/**
 * The timings of the Idempotency Keys: the lock's (rowLock.ts), the waits for a key in flight in another process
 * (idempotencyKeys.ts) and the keys claimed ahead of a run (runClaims.ts). A process's keys run on its KeysProcess's
 * timing: KEYS_TIMING for the n8n process; the tests and the simulation pass their own.
 */
export const KEYS_TIMING = {
	/** The limits of a hold of the lock and of a wait for it. */
	lock: {
		/**
		 * A waiter that has watched one lock this long (marks by others let it run on, a take-over starts it again)
		 * marks it (random entries of its own in the row): a hold usually ends well within it, a mark is a write, and
		 * it is longer than graceMs, so that no new waiter's mark lands within a taker's grace (where any change of the
		 * count makes the taker lose: issue 51's false blocks).
		 */
		markAfterMs: 30_000,
		/**
		 * A waiter that has watched one lock, marked, unchanged this long since the mark breaks it: its holder died (or
		 * hangs).
		 */
		leaseMs: 60_000,
		/**
		 * A holder writes only this long after it sent its taking (the INSERT, or a take-over's write, whose grace takes
		 * graceMs of it); the rest of the lease and the next taker's grace cover a slow query.
		 */
		writeMs: 45_000,
		/** A holder deletes its lock only this long after its taking; past it, the lock is left to the waiters' lease. */
		releaseMs: 55_000,
		/**
		 * How long a process that took the lock by a plain write (a take-over, an empty row) waits before it checks
		 * that the lock is its own: another taker's write of the same moment has landed by then, though n8n's store
		 * reads the row and writes it back in two queries, the second waiting up to 20 s for a pool connection.
		 */
		graceMs: 25_000,
		/**
		 * A taker waits at random up to this long, or longer with more waiters and slower looks (up to
		 * breakJitterMaxMs), and looks again, so that two waiters rarely take over at once.
		 */
		breakJitterMs: 1_000,
		/** The longest random wait before a take-over (and after takers collided). */
		breakJitterMaxMs: 30_000,
		/** How long a claim waits for the lock before its item fails with nothing sent. */
		maxWaitMs: 90_000,
		/**
		 * Polling interval bounds (with jitter). A hold takes a few round trips to the database: a waiter that looks
		 * every 50 ms at most takes the lock soon after it is given back (one small read of the lock's row a look).
		 */
		pollMinMs: 5,
		pollMaxMs: 50,
	},
	/** Waits for a key in flight in another process. */
	flight: {
		/** Added to Max Retry Wait + Timeout: how long another process's create of the same key is waited for. */
		marginMs: 30_000,
		pollMinMs: 100,
		/** A key in flight elsewhere is usually settled within a create's time: looked at again at least this often. */
		pollMaxMs: 500,
		/**
		 * How much later than sent a query may reach n8n's database: its pool waits up to 20 s for a connection. An
		 * outcome that takes a key's `claim:` out is sent no later than this before any other process can give up on the
		 * flight (keyStore.ts, lateAfter).
		 */
		queryDelayMs: 20_000,
	},
	/** How long keys claimed ahead are held without their item's turn. */
	ahead: {
		/**
		 * A key claimed ahead whose item's turn has not come within this time is given back (the item claims it again
		 * at its turn): another process waiting for it waits at least 30 s (flight.marginMs), and must find it
		 * sent or free, not held for items stuck behind a slow service.
		 */
		heldMs: 10_000,
		/** How often the keys claimed ahead are looked at for one held too long. */
		checkMs: 1_000,
	},
} as const;

/** Timings of the same shape, any values. */
type Widened<T> = { -readonly [K in keyof T]: number };
export type LockTiming = Widened<typeof KEYS_TIMING.lock>;
export type FlightTiming = Widened<typeof KEYS_TIMING.flight>;
export type AheadTiming = Widened<typeof KEYS_TIMING.ahead>;
export interface KeysTiming {
	lock: LockTiming;
	flight: FlightTiming;
	ahead: AheadTiming;
}
