import { count, rejectAll, writeRow } from './rowBatch';
import { RowLock, systemClock, type Clock } from './rowLock';
import type {
	ClaimAnswer,
	ClaimOp,
	ClaimRequest,
	NodeRow,
	Outcome,
	OutcomeOp,
	OutcomeTimes,
	RowBatch,
} from './rowOps';

/**
 * The Idempotency Keys of one workflow's nodes in n8n's processed-data store (scope "node": one row per workflow
 * and node, a list of hashes). The store hashes what it keeps and can only be asked "which of these are there?"
 * by a check that also adds the ones that are not, so a key's state is which of two entries its node's row holds,
 * chosen so that the claim's check writes just what a new claim needs:
 * - `claim:<key>` and `open:<key>`: in flight (claimed, outcome open);
 * - `claim:<key>` alone: created (the claim closed with a record);
 * - `open:<key>` alone: outcome unknown (no claim holds it any more, the outcome stays open);
 * - neither: given back, or never seen.
 * An unknown outcome also has its resend code (resendCodes.ts) as an entry `code:<code> <key>`, added when it became
 * unknown: a claim that lists codes checks theirs too (with their uses, `used:<code> <key>`), takes an unknown key
 * over only when one of them is there unused, and takes out the entries of the codes it lists whatever it finds (a
 * code is used once). History Size counts keys: the row's limit has room for each key's state, for the entries of
 * keys waited for, and for every entry a check adds and the batch takes out again (rowBatch.ts, rowLimit).
 * A claim checks both entries (a new key: both added, now in flight); an outcome removes one (created: `open:`,
 * unknown: `claim:`) or both (given back). Only a claim that finds the key created or unknown takes out the entry
 * its check added. A key marked created late (past `noExpiryBefore`) also has its `claim:` checked in again: another
 * process may have given up waiting for it by then and made it unknown, and a created key must not end absent. An
 * outcome that would take `claim:` out (given back, unknown, or created without that check) is sent only before
 * `lateAfter`: later, another process may have given up on the flight and the key moved on (unknown, taken over
 * with a resend code, created), and the outcome would land on that later state. It is not written then: the key
 * stays in flight (a later delivery waits for it, then finds it unknown) and the outcome fails, saying so.
 * A waiter tells one flight of a key from the next by the key's end marks (flightWatch.ts).
 *
 * Every change happens holding the workflow's RowLock, so no two processes write a row at once. Inside one
 * process, the claims and outcomes of all the workflow's nodes that arrive while a batch is written go together
 * in the next batch: one hold of the lock per batch, one or two writes per node row, and the answers given
 * before the lock is unlocked (`unlocked()` says when it is).
 */

export class KeyStore {
	private claims: ClaimOp[] = [];
	private outcomes: OutcomeOp[] = [];
	private writing = false;
	/** The number of the latest hold of the lock (answers are given inside it, before it is unlocked). */
	private holdNumber = 0;
	/** Holds up to this number have given the lock back. */
	private releasedUpTo = 0;
	private releaseWaiters: Array<{ hold: number; resolve: () => void }> = [];

	constructor(
		private readonly lock: RowLock,
		private readonly onIdle: () => void,
		/** This process's clock (the one an outcome's times are read on). */
		private readonly clock: Pick<Clock, 'now'> = systemClock,
	) {}

	/** A claim's check of its key in the node's row, written with the next batch: the key's state it found. */
	async check(row: NodeRow, key: string, request: ClaimRequest): Promise<ClaimAnswer> {
		return await new Promise<ClaimAnswer>((resolve, reject) => {
			this.claims.push({ row, key, ...request, resolve, reject });
			void this.write();
		});
	}

	/**
	 * A key's outcome (`code`: an unknown key's resend code). By default a created key always has its `claim:` entry
	 * checked in again, and an outcome is never late.
	 */
	async settle(
		row: NodeRow,
		key: string,
		outcome: Outcome,
		code?: string,
		{ noExpiryBefore, lateAfter }: OutcomeTimes = {
			noExpiryBefore: -Infinity,
			lateAfter: Infinity,
		},
	): Promise<void> {
		return await new Promise<void>((resolve, reject) => {
			this.outcomes.push({ row, key, outcome, code, noExpiryBefore, lateAfter, resolve, reject });
			void this.write();
		});
	}

	/** The hold being written now (or the last one): an answer just given came from it. */
	get currentHold(): number {
		return this.holdNumber;
	}

	/**
	 * Resolves once the hold `hold` (by default the current one) has given the lock back: a node run waits for
	 * it before it returns, so that no process ends with the lock of its last writes still taken.
	 */
	async unlocked(hold = this.holdNumber): Promise<void> {
		if (hold <= this.releasedUpTo) return;
		await new Promise<void>((resolve) => this.releaseWaiters.push({ hold, resolve }));
	}

	private async write(): Promise<void> {
		if (this.writing) return;
		this.writing = true;
		// Claims and outcomes handed over together (a run's claims ahead, its marks) go in the same batch.
		await Promise.resolve();
		try {
			while (this.claims.length > 0 || this.outcomes.length > 0) {
				const batches = byRow(this.claims.splice(0), this.outcomes.splice(0));
				const hold = ++this.holdNumber;
				// The rows' counts before the batch are read alongside the lock's own check (undo() needs them).
				await this.lock
					.hold(
						async () =>
							await Promise.all(
								batches.map(async (batch) => {
									batch.before = addsClaims(batch)
										? await count(batch.row).catch(() => undefined)
										: undefined;
								}),
							),
						async (stillHeld) =>
							await Promise.all(
								batches.map(async (batch) => await writeRow(batch, stillHeld, this.clock)),
							),
					)
					.catch((error: unknown) => {
						for (const batch of batches) rejectAll(batch, error);
					})
					.finally(() => this.releasedThrough(hold));
			}
		} finally {
			this.writing = false;
			this.onIdle();
		}
	}

	private releasedThrough(hold: number): void {
		this.releasedUpTo = hold;
		const due = this.releaseWaiters.filter((waiter) => waiter.hold <= hold);
		this.releaseWaiters = this.releaseWaiters.filter((waiter) => waiter.hold > hold);
		for (const { resolve } of due) resolve();
	}
}

function byRow(claims: ClaimOp[], outcomes: OutcomeOp[]): RowBatch[] {
	const batches = new Map<string, RowBatch>();
	const of = (row: NodeRow) => {
		let batch = batches.get(row.scope);
		if (!batch) batches.set(row.scope, (batch = { row, claims: [], outcomes: [] }));
		return batch;
	};
	for (const op of claims) of(op.row).claims.push(op);
	for (const op of outcomes) of(op.row).outcomes.push(op);
	return [...batches.values()];
}

/**
 * Whether the batch's check must be undone if it fails: claims (a claim's entries written by a check whose answer
 * was lost would leave its key in flight). It needs the row's count. A check of outcomes only adds what is right
 * whether or not it was written (a created key's `claim:`, a code), so it needs neither.
 */
const addsClaims = ({ claims }: RowBatch) => claims.length > 0;
