import type { IExecuteFunctions } from 'n8n-workflow';

import type { FlightWatch } from './flightWatch';
import type { LockHelpers } from './rowLock';

/**
 * What the key store (keyStore.ts) hands to a row's batch (rowBatch.ts): the claims and outcomes of one node's row,
 * and how each is answered. Types only, apart from both, so that neither imports the other's.
 */

export type StoreHelpers = LockHelpers & Pick<IExecuteFunctions['helpers'], 'removeProcessed'>;

/**
 * A key's state when claimed: "new" means this claim now holds it (in flight), and so does `taken` (an unknown
 * key taken over with its code); "expired": in flight elsewhere past the wait, now unknown with the claim's
 * `expiryCode`. In flight elsewhere: "flight", or for a claim that watches (`watch`) the flight's sign, and whether
 * it is the flight watched so far (`same`: else the watch starts again).
 */
export type ClaimAnswer =
	| 'new'
	| 'created'
	| 'unknown'
	| 'expired'
	| 'flight'
	| { taken: string }
	| { flight: string; same: boolean };
/** Where a claimed key goes when its item's outcome is known. */
export type Outcome = 'created' | 'unknown' | 'givenBack';

export interface ClaimRequest {
	/**
	 * An unknown outcome with one of these resend codes is taken over as a new claim (Options → Resend Unknown
	 * Outcomes Of). Never a key in flight past the wait: that one gets a code of its own (`expiryCode`).
	 */
	codes: string[];
	/**
	 * Follows the key's flight (flightWatch.ts): its sign comes with a "flight" answer. A waiter sends it from its
	 * second look on.
	 */
	watch?: FlightWatch;
	/**
	 * A key still in flight is given up on: it becomes unknown (its holder outlived the wait, or died). Only the
	 * flight watched (`watch.sign`, unchanged, and the key watched all along): any other is a "flight" answer...
	 */
	expireFlight: boolean;
	/** ...with this resend code (required with expireFlight). */
	expiryCode?: string;
	/**
	 * Called just before the answer when the batch's removal failed (3 tries) and left the key looking in flight: the
	 * entry this claim's check added and its answer does not keep (a created key's `open:`, an unknown key's
	 * `claim:`) is still there, so a later claim waits for the key, then finds it unknown (never sent twice).
	 */
	onLeftInFlight?: () => void;
}

/** The node whose row a key lives in: its row's name in this process, its helpers, how many keys it keeps. */
export interface NodeRow {
	scope: string;
	helpers: StoreHelpers;
	historySize: number;
	/**
	 * This process's code entries (`code:`, and the uses `used:` beside them) that a removal could not take out, by
	 * row (KeysProcess.codesLeftIn): taken out with the row's next removal, and counted in the row's limit until then
	 * (rowBatch.ts, rowLimit). A claim that lists resend codes checks their entries for its key, which adds those not
	 * there; left in, one would look like a code issued for that key, and a later claim listing it (the code still in
	 * the option) would take the key over once it is unknown, unchecked. Taking one out later is right (a code is
	 * random and issued once) but for one a batch keeps: a waiter's give-up code, which each of its looks checks.
	 */
	codesLeftIn: Map<string, Set<string>>;
}

export interface Pending<T> {
	row: NodeRow;
	key: string;
	resolve(value: T): void;
	reject(error: unknown): void;
}
export type ClaimOp = Pending<ClaimAnswer> & ClaimRequest;
/**
 * When an outcome is sent, on this process's clock: `noExpiryBefore`, the time before which no other process can have
 * given up waiting for the key (ClaimRequest.expireFlight), so a created key needs no second check of its `claim:`;
 * `lateAfter`, the last time an outcome that takes `claim:` out may be sent (it may reach n8n's database that much
 * later, still before any give-up).
 */
export interface OutcomeTimes {
	noExpiryBefore: number;
	lateAfter: number;
}
/** `code`: an unknown key's resend code. */
export type OutcomeOp = Pending<void> & OutcomeTimes & { outcome: Outcome; code?: string };

/** One node row's share of a batch. */
export interface RowBatch {
	row: NodeRow;
	claims: ClaimOp[];
	outcomes: OutcomeOp[];
	/** The row's entry count when the lock was taken (for a batch that adds entries). */
	before?: number;
}
