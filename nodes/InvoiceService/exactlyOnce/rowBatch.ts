import type { IDeduplicationOutput } from 'n8n-workflow';

import type { ClaimAnswer, ClaimOp, NodeRow, Outcome, OutcomeOp, RowBatch } from './rowOps';
import { END_MARKS, endEntries, endMarksToRemove, signOf, watchedEntry } from './flightWatch';
import { asLockError, leftInFlightError, tooLateError } from './lockErrors';
import type { Clock } from './rowLock';

/**
 * One node row's share of a KeyStore batch, written under the workflow's lock (keyStore.ts says what the entries
 * mean): the claims' check, what the outcomes add, one removal; a failed claims' check undone by the row's count.
 */

const CLAIM = 'claim:';
const OPEN = 'open:';
const CODE = 'code:';
const USED = 'used:';
/** A resend code's entry for a key. */
const codeEntry = (code: string, key: string) => `${CODE}${code} ${key}`;
/**
 * A code's use, checked with the code's entry by every claim listing the code and taken out with it: written by the
 * very check that takes the key over, it stays exactly as long as that code entry does (a removal takes both out in
 * one write, a trim the older code entry first), so a code entry left in is never used twice.
 */
const usedEntry = (code: string, key: string) => `${USED}${code} ${key}`;
/** The entries a failed removal leaves that any later removal may take out (NodeRow.codesLeftIn). */
const leftOverKind = (entry: string) => entry.startsWith(CODE) || entry.startsWith(USED);

/**
 * How many entries of the node's row one key's state holds at most: in flight `claim:` and `open:`; outcome unknown
 * `open:` and its resend code; created `claim:` (and the code of a give-up its late mark came after).
 */
export const KEY_ENTRIES = 2;
/**
 * Keys waited for at once (flightWatch.ts) that the row has room for beyond History Size's keys (as many as History
 * Size when it is smaller): each holds `watched:` and up to END_MARKS end marks while a waiter waits for it (a
 * waiter's last look takes them out).
 */
export const WATCHED_KEYS = 100;

/**
 * The row's limit, the `maxEntries` of the checks that trim it: History Size keys' state (KEY_ENTRIES each), the
 * watch entries of WATCHED_KEYS keys (or History Size), this process's entries left in by failed removals (taken out with the next),
 * and `adding`, the entries the check adds (what the batch's removal takes out again among them). n8n trims the
 * oldest entries: a key is forgotten only once the entries written after it outnumber all that, so only after
 * History Size other keys got any entry after it (claimed, resent, made unknown), whatever else the row holds.
 */
export function rowLimit(row: NodeRow, adding: number): number {
	const leftIn = row.codesLeftIn.get(row.scope)?.size ?? 0;
	const watched = Math.min(row.historySize, WATCHED_KEYS);
	return KEY_ENTRIES * row.historySize + watched * (1 + END_MARKS) + leftIn + adding;
}

/** The answers whose claim's removal takes out a state entry its check added: left in, the key looks in flight. */
const LEAVES_IN_FLIGHT = new Set<string>(['created', 'unknown', 'expired']);

/** The entries an outcome takes out of the row. */
const REMOVED_BY: Record<Outcome, string[]> = {
	created: [OPEN],
	unknown: [CLAIM],
	givenBack: [CLAIM, OPEN],
};

/** Every op of the batch fails with `error`. */
export function rejectAll(batch: RowBatch, error: unknown): void {
	for (const op of [...batch.claims, ...batch.outcomes]) op.reject(error);
}

/** The code entries a removal of this row left in (NodeRow.codesLeftIn), but those `kept`: no longer left over. */
function leftOver(row: NodeRow, kept: Set<string>): string[] {
	notLeftIn(row, kept);
	return [...(row.codesLeftIn.get(row.scope) ?? [])];
}

/** These entries are no longer left in the row (taken out, or kept on purpose). */
function notLeftIn(row: NodeRow, entries: Iterable<string>): void {
	const left = row.codesLeftIn.get(row.scope);
	if (!left) return;
	for (const entry of entries) left.delete(entry);
	if (left.size === 0) row.codesLeftIn.delete(row.scope);
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
export async function writeRow(
	batch: RowBatch,
	stillHeld: () => void,
	clock: Pick<Clock, 'now'>,
): Promise<void> {
	const { row, claims, outcomes } = batch;
	try {
		const plan = planOutcomes(outcomes, clock);
		const { coded, ending, outcomeEntries } = plan;
		const remove: string[] = [];
		// Once their check is written, the claims' answers stand whatever follows (a key found created keeps its
		// answer; if the removal of what its check added fails, the key looks in flight: never sent twice). A failed
		// check (undone) fails the claims alone: the outcomes do not depend on it.
		let answers: ClaimAnswer[] | undefined;
		if (claims.length > 0) {
			try {
				answers = await checkClaims(batch, claimEntriesOf(claims), remove, stillHeld);
			} catch (error) {
				for (const op of claims) op.reject(error);
			}
		}
		// Code entries this batch keeps (a give-up's, an unknown outcome's) are no longer left over: the give-up's code
		// is the same at each look of its waiter, and an earlier look's removal may have failed to take it out.
		const kept = new Set([
			...coded.map(({ entry }) => entry),
			...claims.flatMap(({ key, expiryCode }, index) =>
				answers?.[index] === 'expired' && expiryCode ? [codeEntry(expiryCode, key)] : [],
			),
		]);
		remove.unshift(...leftOver(row, kept));
		let failure: unknown;
		if (outcomeEntries.length > 0) {
			try {
				stillHeld();
				// Sent without a limit (it never trims): the claims' check of the batch has already trimmed the row,
				// and what this one adds (a code, `watched:`) is one entry for an entry the removal takes out.
				const { processed } = await record(row, outcomeEntries);
				await markEnds(row, ending, new Set(processed.map(String)), remove, stillHeld);
			} catch (error) {
				failure = error;
			}
		}
		let removed = true;
		try {
			await removeWithRetries(row, () => plan.removal(remove, failure), stillHeld);
		} catch (error) {
			removed = false;
			failure ??= error;
		}
		answerAll(batch, { answers, removed, failure, late: plan.late });
	} catch (error) {
		// Anything unforeseen: every op not answered yet fails (an answered one keeps its answer).
		rejectAll(batch, error);
	}
}

/** What the claims' check adds: each key's two entries, the codes it lists (and their uses), its watch's entries. */
function claimEntriesOf(claims: ClaimOp[]): string[] {
	return claims.flatMap(({ key, codes, expireFlight, expiryCode, watch }) => [
		CLAIM + key,
		OPEN + key,
		...codes.flatMap((code) => [codeEntry(code, key), usedEntry(code, key)]),
		...(expireFlight && expiryCode ? [codeEntry(expiryCode, key)] : []),
		...(watch ? [watchedEntry(key), ...endEntries(key)] : []),
	]);
}

/**
 * What the outcomes of a batch write: the entries their check adds (a late created key's `claim:`, an unknown key's
 * code, an ending flight's `watched:`), the flights that end other than created, and, at each try of the removal,
 * what it takes out (`removal`), leaving out the outcomes too late by then (`late`: not written).
 */
function planOutcomes(outcomes: OutcomeOp[], clock: Pick<Clock, 'now'>) {
	// A created key's claim is checked in again once another process may have outlived its wait for it and made
	// it unknown: a created key must not end absent (a later delivery would create the record again). Before
	// that, no process can have (it waits at least twice as long from after the claim was written), and the lock
	// keeps every other process out until this batch is written.
	const now = clock.now();
	// A created key whose `claim:` this batch checks in again may lose its `open:` at any time after.
	const checkedIn = (op: OutcomeOp) =>
		op.outcome === 'created' && (now >= op.noExpiryBefore || now >= op.lateAfter);
	// Outcomes that would take `claim:` out too late, at a removal sent at `at`: not written (keyStore.ts).
	const late = new Set<OutcomeOp>();
	// Outcomes a removal try carried: that try may have been written, so they never turn late after it.
	const tried = new Set<OutcomeOp>();
	const lateBy = (at: number) => {
		for (const op of outcomes)
			if (at >= op.lateAfter && !checkedIn(op) && !tried.has(op)) late.add(op);
	};
	lateBy(now);
	// A flight that ends other than created (given back, unknown) is marked for the key's waiters (flightWatch.ts):
	// its check asks whether the key is watched.
	const ending = outcomes
		.filter((op) => op.outcome !== 'created' && !late.has(op))
		.map(({ key }) => key);
	// A late unknown key gets no resend code: another process gives it one when it gives up on the flight, and two
	// codes of one key would let the second take the key over again after the first was used.
	const coded = outcomes.flatMap((op) =>
		op.outcome === 'unknown' && op.code && !late.has(op)
			? [{ op, entry: codeEntry(op.code, op.key) }]
			: [],
	);
	const outcomeEntries = [
		...outcomes.filter(checkedIn).map(({ key }) => CLAIM + key),
		...coded.map(({ entry }) => entry),
		...ending.map(watchedEntry),
	];
	// Outcomes whose entries could not be added (`failure`) change nothing more (a created key keeps its `open:`),
	// nor do those too late at the time each try of the removal is sent.
	const removal = (remove: string[], failure: unknown) => {
		if (failure) return remove;
		lateBy(clock.now());
		const onTime = outcomes.filter((op) => !late.has(op));
		for (const op of onTime) tried.add(op);
		return [
			...remove,
			...onTime.flatMap(({ key, outcome }) => REMOVED_BY[outcome].map((entry) => entry + key)),
			// A code added before its outcome turned late is taken back (taking a code out is always right).
			...coded.filter(({ op }) => late.has(op)).map(({ entry }) => entry),
		];
	};
	return { late, ending, coded, outcomeEntries, removal };
}

/**
 * Every op of the batch answered: a claim by its check's answer (told first when the removal failed and left its
 * key looking in flight), an outcome once its removal is written (or with the failure, or as too late).
 */
function answerAll(
	{ claims, outcomes }: RowBatch,
	done: { answers?: ClaimAnswer[]; removed: boolean; failure: unknown; late: Set<OutcomeOp> },
): void {
	const { answers, removed, failure, late } = done;
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
		else if (late.has(op)) op.reject(tooLateError());
		else op.resolve();
	}
}

/**
 * The ends of the flights of `keys` (given back, unknown), for their waiters: a key found watched (`held`) gets its
 * next end mark, before its end is written (the batch's removal); an unwatched key's `watched:`, added by the check,
 * goes with the removal. Throws when the marks could not be checked: the outcomes then fail, and change nothing.
 */
async function markEnds(
	row: NodeRow,
	keys: string[],
	held: Set<string>,
	remove: string[],
	stillHeld: () => void,
): Promise<void> {
	const watched = keys.filter((key) => held.has(watchedEntry(key)));
	remove.push(...keys.filter((key) => !held.has(watchedEntry(key))).map(watchedEntry));
	if (watched.length === 0) return;
	stillHeld();
	// Sent without a limit: what it adds is taken out by the removal that follows.
	const { processed } = await record(row, watched.flatMap(endEntries));
	const marks = new Set(processed.map(String));
	remove.push(...watched.flatMap((key) => endMarksToRemove(key, marks, true)));
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
	// Room for History Size keys, the watch entries of keys waited for, the entries left in and every entry the check
	// adds (rowLimit). A check that could trim is sent without a limit (its count then tells whether a failed check
	// was written) and the row is trimmed after.
	const cap = rowLimit(row, new Set(claimEntries).size);
	const before = batch.before;
	const trims = before + new Set(claimEntries).size > cap;
	let held: Set<string>;
	try {
		const { processed } = await record(row, claimEntries, trims ? undefined : cap);
		held = new Set(processed.map(String));
	} catch (error) {
		await undo(row, claimEntries, before, stillHeld);
		throw asLockError(error);
	}
	const answers = claims.map((claim) => decide(claim, held, remove));
	// The row is only larger until the next batch trims it, when this fails (or the hold is too old to write in).
	if (trims) {
		try {
			stillHeld();
			await record(row, [], cap);
		} catch {
			// Trimmed by the next batch.
		}
	}
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
 * The removal, sent again when it fails, each try only while the hold may write (stillHeld: a try sent later could
 * land under the next holder; not sent, the row keeps what the removal was to take out, and the batch says so), and
 * each with what `entries` says then (nothing: no try).
 * Throws the last failure as a LockError.
 */
async function removeWithRetries(
	row: NodeRow,
	entries: () => string[],
	stillHeld: () => void,
): Promise<void> {
	let failure: unknown;
	let remove: string[] = [];
	for (let attempt = 0; attempt < REMOVAL_TRIES; attempt++) {
		// What this try takes out, as of when it is sent.
		remove = entries();
		if (remove.length === 0) return;
		try {
			stillHeld();
		} catch (error) {
			failure = error;
			break;
		}
		failure = await row.helpers.removeProcessed(remove, 'node', { mode: 'entries' }).then(
			() => undefined,
			(error: unknown) => asLockError(error),
		);
		if (!failure) {
			notLeftIn(row, remove);
			return;
		}
	}
	const codes = remove.filter(leftOverKind);
	if (codes.length > 0) {
		const left = row.codesLeftIn.get(row.scope) ?? new Set<string>();
		for (const entry of codes) left.add(entry);
		row.codesLeftIn.set(row.scope, left);
	}
	throw asLockError(failure);
}

/**
 * A claims' check that failed may have been written before it failed (a connection dropped after the commit). Sent
 * without a trim, the row's count tells: unchanged, nothing was written; grown by every entry checked, all were new,
 * and are taken out again. Between, the check mixed entries the row held (a re-delivery) with new ones, which cannot
 * be told apart (the answer was lost): the keys stay in flight (never sent twice), and the error says what a later
 * delivery meets (issue 42, defect 6). Its code entries go all the same (checked, so used), but not with the count
 * unknown (asked 3 times): if nothing was written, a code issued for the key would be lost.
 */
async function undo(
	row: NodeRow,
	claimEntries: string[],
	before: number,
	stillHeld: () => void,
): Promise<void> {
	let after: number | undefined;
	for (let tries = 0; tries < REMOVAL_TRIES && after === undefined; tries++)
		after = await count(row).catch(() => undefined);
	if (after === before) return;
	if (after === before + new Set(claimEntries).size) {
		await removeWithRetries(row, () => claimEntries, stillHeld);
		return;
	}
	const codes = claimEntries.filter(leftOverKind);
	if (after !== undefined && codes.length > 0)
		await removeWithRetries(row, () => codes, stillHeld).catch(() => undefined);
	throw leftInFlightError();
}

export async function count(row: NodeRow): Promise<number> {
	return await call(
		async () => await row.helpers.getProcessedDataCount('node', { mode: 'entries' }),
	);
}

async function call<T>(work: () => Promise<T>): Promise<T> {
	return await work().catch((error: unknown) => {
		throw asLockError(error);
	});
}

/**
 * A claim's answer from the entries its row held before the check; `remove` gets what the check added and the
 * answer does not keep.
 */
function decide(claim: ClaimOp, held: Set<string>, remove: string[]): ClaimAnswer {
	const { key, codes, expireFlight, expiryCode, watch } = claim;
	const claimed = held.has(CLAIM + key);
	const open = held.has(OPEN + key);
	// The listed codes' entries go whatever the key's state (added by the check, used now, or left over), each with
	// its use: a use matters only while its code entry is there.
	const used = (code: string) => held.has(usedEntry(code, key));
	const taking = codes.find((code) => held.has(codeEntry(code, key)) && !used(code));
	for (const code of codes) remove.push(codeEntry(code, key), usedEntry(code, key));
	const expiry = expireFlight && expiryCode ? codeEntry(expiryCode, key) : undefined;
	// The flight watched, still in flight: watched all along (`watched:` there) and no end marked since (the sign).
	const sign = watch ? signOf(key, held) : undefined;
	const same = watch !== undefined && held.has(watchedEntry(key)) && watch.sign === sign;
	const answer = decideState(key, claimed, open, expireFlight && same, taking, remove);
	if (expiry && answer !== 'expired') remove.push(expiry);
	// A waiter still waiting keeps `watched:` and takes out the end marks its check added. One whose wait is over
	// (created, unknown, given up on, or new: the flight it watched has ended) takes out every watch entry of the key:
	// another waiter's next look then misses `watched:` and starts its watch again (flightWatch.ts), as it would at
	// that end; kept, they would stay in the row for good.
	if (watch)
		remove.push(
			...(answer === 'flight'
				? endMarksToRemove(key, held, false)
				: [watchedEntry(key), ...endEntries(key)]),
		);
	if (answer === 'flight' && sign !== undefined) return { flight: sign, same };
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
