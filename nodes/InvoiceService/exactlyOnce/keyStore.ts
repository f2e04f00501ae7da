import type { IDeduplicationOutput, IExecuteFunctions } from 'n8n-workflow';

import {
	asLockError,
	LockError,
	RowLock,
	systemClock,
	type Clock,
	type LockHelpers,
} from './rowLock';

/**
 * The Idempotency Keys of one workflow's nodes in n8n's processed-data store (scope "node": one row per workflow
 * and node, a list of hashes). The store hashes what it keeps and can only be asked "which of these are there?"
 * by a check that also adds the ones that are not, so a key's state is which of two entries its node's row holds,
 * chosen so that the claim's check writes just what a new claim needs:
 * - `claim:<key>` and `open:<key>`: in flight (claimed, outcome open);
 * - `claim:<key>` alone: created (the claim closed with a record);
 * - `open:<key>` alone: outcome unknown (no claim holds it any more, the outcome stays open);
 * - neither: released, or never seen.
 * An unknown outcome also has its resend code (resendCodes.ts) as an entry `code:<code> <key>`, added when it became
 * unknown: a claim that lists codes checks theirs too, takes an unknown key over only when one of them is there,
 * and takes out the entries of the codes it lists whatever it finds (a code is used once).
 * A claim checks both entries (a new key: both added, now in flight); an outcome removes one (created: `open:`,
 * unknown: `claim:`) or both (released). Only a claim that finds the key created or unknown takes out the entry
 * its check added. A key marked created late (past `noExpiryBefore`) also has its `claim:` checked in again: another
 * process may have given up waiting for it by then and made it unknown, and a created key must not end absent.
 *
 * Every change happens holding the workflow's RowLock, so no two processes write a row at once. Inside one
 * process, the claims and outcomes of all the workflow's nodes that arrive while a batch is written go together
 * in the next batch: one hold of the lock per batch, one or two writes per node row, and the answers given
 * before the lock is released (`released()` says when it is).
 */

export type StoreHelpers = LockHelpers & Pick<IExecuteFunctions['helpers'], 'removeProcessed'>;

/**
 * A key's state when claimed: "new" means this claim now holds it (in flight), and so does `taken` (an unknown
 * key taken over with its code); "expired": in flight elsewhere past the wait, now unknown with the claim's
 * `expiryCode`.
 */
export type ClaimAnswer = 'new' | 'created' | 'unknown' | 'expired' | 'flight' | { taken: string };
/** Where a claimed key goes when its item's outcome is known. */
export type Outcome = 'created' | 'unknown' | 'released';

export interface ClaimRequest {
	/**
	 * An unknown outcome with one of these resend codes is taken over as a new claim (Options → Resend Unknown
	 * Outcomes Of). Never a key in flight past the wait: that one gets a code of its own (`expiryCode`).
	 */
	codes: string[];
	/** A key still in flight is given up on: it becomes unknown (its holder outlived the wait, or died)... */
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
}

const CLAIM = 'claim:';
const OPEN = 'open:';
const CODE = 'code:';
/** A resend code's entry for a key. */
const codeEntry = (code: string, key: string) => `${CODE}${code} ${key}`;
/**
 * Code entries a removal could not take out, by row (this process): taken out with that row's next removal. A claim
 * that lists resend codes checks their entries for its key, which adds those that are not there; left in, one would
 * look like a code issued for that key, and a later claim listing it (the code still in the option) would take the key
 * over once it is unknown, without anyone having checked it. Taking one out later is always right: a code is random
 * and issued once, so its entry for a key is never wanted once a claim has checked it.
 */
const codesLeftIn = new Map<string, Set<string>>();

/** The answers whose claim's removal takes out a state entry its check added: left in, the key looks in flight. */
const LEAVES_IN_FLIGHT = new Set<string>(['created', 'unknown', 'expired']);

/** The entries an outcome takes out of the row. */
const REMOVED_BY: Record<Outcome, string[]> = {
	created: [OPEN],
	unknown: [CLAIM],
	released: [CLAIM, OPEN],
};

interface Pending<T> {
	row: NodeRow;
	key: string;
	resolve(value: T): void;
	reject(error: unknown): void;
}
type ClaimOp = Pending<ClaimAnswer> & ClaimRequest;
/**
 * `code`: an unknown key's resend code. `noExpiryBefore` (a created key): the time, on this process's clock, before
 * which no other process can have given up waiting for the key (ClaimRequest.expireFlight).
 */
type OutcomeOp = Pending<void> & { outcome: Outcome; code?: string; noExpiryBefore: number };

export class KeyStore {
	private claims: ClaimOp[] = [];
	private outcomes: OutcomeOp[] = [];
	private writing = false;
	/** The number of the latest hold of the lock (answers are given inside it, before it is released). */
	private holdNumber = 0;
	/** Holds up to this number have given the lock back. */
	private releasedUpTo = 0;
	private releaseWaiters: Array<{ hold: number; resolve: () => void }> = [];

	constructor(
		private readonly lock: RowLock,
		private readonly onIdle: () => void,
		/** This process's clock (the one `noExpiryBefore` is read on). */
		private readonly clock: Pick<Clock, 'now'> = systemClock,
	) {}

	async claim(row: NodeRow, key: string, request: ClaimRequest): Promise<ClaimAnswer> {
		return await new Promise<ClaimAnswer>((resolve, reject) => {
			this.claims.push({ row, key, ...request, resolve, reject });
			void this.write();
		});
	}

	/**
	 * A key's outcome (`code`: an unknown key's resend code). A created key marked at or after `noExpiryBefore`
	 * (this process's clock; by default always) has its `claim:` entry checked in again.
	 */
	async settle(
		row: NodeRow,
		key: string,
		outcome: Outcome,
		code?: string,
		noExpiryBefore = -Infinity,
	): Promise<void> {
		return await new Promise<void>((resolve, reject) => {
			this.outcomes.push({ row, key, outcome, code, noExpiryBefore, resolve, reject });
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
	async released(hold = this.holdNumber): Promise<void> {
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

/** One node row's share of a batch. */
interface RowBatch {
	row: NodeRow;
	claims: ClaimOp[];
	outcomes: OutcomeOp[];
	/** The row's entry count when the lock was taken (for a batch that adds entries). */
	before?: number;
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

function rejectAll(batch: RowBatch, error: unknown): void {
	for (const op of [...batch.claims, ...batch.outcomes]) op.reject(error);
}

/** How many times a removal is sent before its batch's outcomes fail (it only takes entries out: a repeat is safe). */
const REMOVAL_TRIES = 3;

/**
 * One row's batch under the lock: one check for the claims' entries, one for what the outcomes add (a late created
 * key's `claim:`, an unknown key's code; only when there is any), then one removal for the outcomes and for what the
 * claims' answers do not keep. Apart, a check that fails after its commit is undone by the row's count (claims) or
 * needs no undo (it adds only what is right either way). A claim is answered once its check is written; an outcome
 * once its removal is.
 */
async function writeRow(
	batch: RowBatch,
	stillHeld: () => void,
	clock: Pick<Clock, 'now'>,
): Promise<void> {
	const { row, claims, outcomes } = batch;
	try {
		const claimEntries = claims.flatMap(({ key, codes, expireFlight, expiryCode }) => [
			CLAIM + key,
			OPEN + key,
			...codes.map((code) => codeEntry(code, key)),
			...(expireFlight && expiryCode ? [codeEntry(expiryCode, key)] : []),
		]);
		// A created key's claim is checked in again once another process may have outlived its wait for it and made
		// it unknown: a created key must not end absent (a later delivery would create the record again). Before
		// that, no process can have (it waits at least twice as long from after the claim was written), and the lock
		// keeps every other process out until this batch is written.
		const now = clock.now();
		const outcomeEntries = outcomes.flatMap(({ key, outcome, code, noExpiryBefore }) => [
			...(outcome === 'created' && now >= noExpiryBefore ? [CLAIM + key] : []),
			...(outcome === 'unknown' && code ? [codeEntry(code, key)] : []),
		]);
		const remove: string[] = [...(codesLeftIn.get(row.scope) ?? [])];
		// Once their check is written, the claims' answers stand whatever follows (a key found created keeps its
		// answer; if the removal of what its check added fails, the key looks in flight: never sent twice). A failed
		// check (undone) fails the claims alone: the outcomes do not depend on it.
		let answers: ClaimAnswer[] | undefined;
		if (claims.length > 0) {
			try {
				answers = await checkClaims(batch, claimEntries, remove, stillHeld);
			} catch (error) {
				for (const op of claims) op.reject(error);
			}
		}
		/** Whether a check of this batch is written: its removal then goes however late (it completes it). */
		let written = answers !== undefined;
		let failure: unknown;
		if (outcomeEntries.length > 0) {
			try {
				stillHeld();
				await record(row, outcomeEntries, row.historySize + outcomeEntries.length);
				written = true;
			} catch (error) {
				failure = error;
			}
		}
		// Outcomes whose entries could not be added change nothing more (a created key keeps its `open:`).
		if (!failure) {
			remove.push(
				...outcomes.flatMap(({ key, outcome }) => REMOVED_BY[outcome].map((entry) => entry + key)),
			);
		}
		let removed = true;
		if (remove.length > 0) {
			try {
				if (!written) stillHeld();
				await removeWithRetries(row, remove);
			} catch (error) {
				removed = false;
				failure ??= error;
			}
		}
		if (answers) {
			claims.forEach((op, index) => {
				const answer = answers[index];
				if (!removed && typeof answer === 'string' && LEAVES_IN_FLIGHT.has(answer)) {
					op.onLeftInFlight?.();
				}
				op.resolve(answer);
			});
		}
		for (const op of outcomes) {
			if (failure) op.reject(failure);
			else op.resolve();
		}
	} catch (error) {
		// Anything unforeseen: every op not answered yet fails (an answered one keeps its answer).
		rejectAll(batch, error);
	}
}

/**
 * The claims' check: their answers, and in `remove` what the check added that the answers do not keep. A check
 * that fails is undone (undo()) and throws.
 */
async function checkClaims(
	batch: RowBatch,
	claimEntries: string[],
	remove: string[],
	stillHeld: () => void,
): Promise<ClaimAnswer[]> {
	const { row, claims } = batch;
	stillHeld();
	if (batch.before === undefined) batch.before = await count(row);
	stillHeld();
	// Room for History Size keys, the second entry of each new claim and the codes checked and taken out again. A
	// check that could trim is sent without a limit (its count then tells whether a failed check was written) and
	// the row is trimmed after.
	const cap = row.historySize + claims.length + (claimEntries.length - 2 * claims.length);
	const before = batch.before;
	const trims = before + new Set(claimEntries).size > cap;
	let held: Set<string>;
	try {
		const { processed } = await record(row, claimEntries, trims ? undefined : cap);
		held = new Set(processed.map(String));
	} catch (error) {
		await undo(row, claimEntries, before);
		throw asLockError(error);
	}
	const answers = claims.map((claim) => decide(claim, held, remove));
	// The row is only larger until the next batch trims it, when this fails.
	if (trims) await record(row, [], cap).catch(() => undefined);
	return answers;
}

/** A check of the node's row (it records what it does not find), trimmed to `maxEntries` when given. */
async function record(
	row: NodeRow,
	entries: string[],
	maxEntries?: number,
): Promise<IDeduplicationOutput> {
	return await call(
		async () =>
			await row.helpers.checkProcessedAndRecord(entries, 'node', {
				mode: 'entries',
				...(maxEntries === undefined ? {} : { maxEntries }),
			}),
	);
}

/**
 * The removal, sent again when it fails (no stillHeld(): the check is written, and the row is only right once
 * this is). Throws the last failure as a LockError.
 */
async function removeWithRetries(row: NodeRow, remove: string[]): Promise<void> {
	let failure: unknown;
	for (let attempt = 0; attempt < REMOVAL_TRIES; attempt++) {
		failure = await row.helpers.removeProcessed(remove, 'node', { mode: 'entries' }).then(
			() => undefined,
			(error: unknown) => asLockError(error),
		);
		if (!failure) {
			const left = codesLeftIn.get(row.scope);
			for (const entry of remove) left?.delete(entry);
			if (left?.size === 0) codesLeftIn.delete(row.scope);
			return;
		}
	}
	const codes = remove.filter((entry) => entry.startsWith(CODE));
	if (codes.length > 0) {
		const left = codesLeftIn.get(row.scope) ?? new Set<string>();
		for (const entry of codes) left.add(entry);
		codesLeftIn.set(row.scope, left);
	}
	throw asLockError(failure);
}

/**
 * A claims' check that failed may have been written before it failed (the connection dropped after the commit). It
 * was sent without a trim, so the row's count tells: unchanged, nothing was written; grown by every entry checked,
 * all were new, and they are taken out again. Anything between (another process's write, which the lock rules out)
 * cannot be told apart, and the error says so.
 */
async function undo(row: NodeRow, claimEntries: string[], before: number): Promise<void> {
	const after = await count(row).catch(() => undefined);
	if (after === before) return;
	if (after === before + new Set(claimEntries).size) {
		await removeWithRetries(row, claimEntries);
		return;
	}
	throw new LockError(
		'store',
		"n8n's database failed while recording Idempotency Keys, and may have recorded part of the change",
	);
}

async function count(row: NodeRow): Promise<number> {
	return await call(
		async () => await row.helpers.getProcessedDataCount('node', { mode: 'entries' }),
	);
}

async function call<T>(work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		throw asLockError(error);
	}
}

/**
 * A claim's answer from the entries its row held before the check; `remove` gets what the check added and the
 * answer does not keep.
 */
function decide(claim: ClaimOp, held: Set<string>, remove: string[]): ClaimAnswer {
	const { key, codes, expireFlight, expiryCode } = claim;
	const claimed = held.has(CLAIM + key);
	const open = held.has(OPEN + key);
	// The listed codes' entries go whatever the key's state: added by the check, used now, or left over.
	const taking = codes.find((code) => held.has(codeEntry(code, key)));
	remove.push(...codes.map((code) => codeEntry(code, key)));
	const expiry = expireFlight && expiryCode ? codeEntry(expiryCode, key) : undefined;
	const answer = decideState(key, claimed, open, expireFlight, taking, remove);
	if (expiry && answer !== 'expired') remove.push(expiry);
	return answer;
}

function decideState(
	key: string,
	claimed: boolean,
	open: boolean,
	expireFlight: boolean,
	taking: string | undefined,
	remove: string[],
): ClaimAnswer {
	if (claimed && !open) {
		remove.push(OPEN + key);
		return 'created';
	}
	// In flight elsewhere: waited for, unless the wait is over (then its outcome is unknown, with a code of its own).
	if (claimed && !expireFlight) return 'flight';
	if (claimed) {
		remove.push(CLAIM + key);
		return 'expired';
	}
	if (open) {
		// Unknown: taken over when its code is listed (the check added what a claim of its own holds); else
		// unknown, without the claim.
		if (taking) return { taken: taking };
		remove.push(CLAIM + key);
		return 'unknown';
	}
	return 'new';
}
