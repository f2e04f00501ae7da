// The bounds the Idempotency Keys' guarantee rests on, as one table (docs/how-it-works.md cites it): each with its
// number and what a user sees beyond it. The simulation measures each in every seed; a violation counts as "beyond
// a named bound" only when a bound of this table was exceeded, before it, where it happened (cluster.ts,
// `classify`). Anything else is a defect. The numbers come from the node's own timings where it has them.
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';

export interface Bound {
	/** The bound's name, as violations and `npm run sim` print it. */
	name: string;
	/** Its number, in milliseconds. */
	ms: number;
	/** What is measured against it. */
	measured: string;
	/** What a user sees beyond it. */
	beyond: string;
}

const { lock } = KEYS_TIMING;

export const BOUNDS = {
	/** A write of a holder (a check, a removal, a trim, an undo) reaching n8n's database late. */
	writeLate: {
		name: 'write-late',
		ms: 40_000,
		measured:
			"a write to a node's row or the lock's row landing in n8n's database more than this after the node sent it (n8n's pool wait, a stalled database, or the process's event loop stalled between n8n's read of the row and its write)",
		beyond:
			'the write can land under the next holder of the lock: a key answered "new" twice (a second invoice), or a created key erased',
	},
	/** The holder's unlock, a DELETE of the lock's row, reaching n8n's database late. */
	deleteLate: {
		name: 'delete-late',
		ms: 30_000,
		measured: "the lock's DELETE landing more than this after the node sent it",
		beyond:
			'the DELETE can remove the next holder\'s lock: two holders, a key answered "new" twice',
	},
	/** A taker's plain write of the lock's row (n8n reads the row, then writes it back whole). */
	takeLate: {
		name: 'take-late',
		ms: lock.graceMs,
		measured:
			"a write of the lock's row landing more than this after n8n's read of the row for it (a take-over, a mark, an empty row taken)",
		beyond:
			'two takers can both believe they hold the lock: two holders, a key answered "new" twice',
	},
	/** A process held up (paused, its event loop stalled, a query held back) at one await. */
	heldUp: {
		name: 'held-up',
		ms: 1_000,
		measured:
			"a process held up (paused, its event loop stalled, a query held back) more than this at one await, at least once in every FREE_BLOCK_MS of each of its waits for a lock no live process holds; or more than 2 s in a run whose hold's 45 s ran out",
		beyond:
			"a dead lock is taken over later than FREE_BLOCK_MS (each hold-up takes a take-over's turn away, and takers at one instant all lose): claims fail \"stayed busy\" meanwhile (nothing sent, run them again); a hold whose time ran out fails its items as n8n's database's",
	},
} as const satisfies Record<string, Bound>;

export const BOUND_TABLE: Bound[] = Object.values(BOUNDS);

/**
 * A promise, not a bound: a lock no live process holds (its holder died, or left it) blocks the claims waiting for it
 * at most this long: the latest mark; the lease (a grace longer after a change seen since the mark), the take-over's
 * longest jitter and its grace; three looks each
 * waiting n8n's 20 s for a pool connection, and a second round of them (takers at one instant all lose). Longer,
 * with a waiter not held up beyond `held-up` for that long, is a false block: a defect.
 */
export const FREE_BLOCK_MS =
	1.5 * lock.markAfterMs +
	2 * (lock.leaseMs + lock.breakJitterMaxMs + 2 * lock.graceMs) +
	3 * KEYS_TIMING.flight.queryDelayMs;
