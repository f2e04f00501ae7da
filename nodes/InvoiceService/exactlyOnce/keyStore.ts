import type { IExecuteFunctions } from 'n8n-workflow';

import { asLockError, LockError, RowLock, type LockHelpers } from './rowLock';

/**
 * A node's Idempotency Keys in n8n's processed-data store (scope "node": one row per workflow and node, a list
 * of hashes). The store hashes what it keeps, so a key's state is which of its entries the row holds:
 * `flight:<key>` (its create is under way), `created:<key>`, `unknown:<key>` (its outcome is unknown); none of
 * them: released, or never seen. A bare `<key>` is a key kept by the node before it had states: created.
 *
 * Every change happens holding the workflow's RowLock, so no two processes write the row at once. Inside one
 * process the changes that arrive while a batch is written go together in the next batch: one lock and two
 * writes per batch, not per item.
 */

export type StoreHelpers = LockHelpers & Pick<IExecuteFunctions['helpers'], 'removeProcessed'>;

/** A key's state when claimed: "new" means this claim now holds it (in flight). */
export type ClaimAnswer = 'new' | 'created' | 'unknown' | 'flight';
/** Where a claimed key goes when its item's outcome is known. */
export type Outcome = 'created' | 'unknown' | 'released';

export interface ClaimRequest {
	/** An unknown outcome is taken over as a new claim (Resend Unknown Outcomes). */
	takeUnknown: boolean;
	/** A key still in flight is given up on: it becomes unknown (its holder outlived the wait, or died). */
	expireFlight: boolean;
}

const FLIGHT = 'flight:';
const CREATED = 'created:';
const UNKNOWN = 'unknown:';

interface Pending<T> {
	key: string;
	resolve(value: T): void;
	reject(error: unknown): void;
}
type ClaimOp = Pending<ClaimAnswer> & ClaimRequest;
type OutcomeOp = Pending<void> & { outcome: Outcome };

/** What a batch writes: entries added by its one check, and removed after it. */
interface Plan {
	add: string[];
	remove: string[];
}

export class KeyStore {
	private claims: ClaimOp[] = [];
	private outcomes: OutcomeOp[] = [];
	private writing = false;

	constructor(
		private readonly helpers: StoreHelpers,
		private readonly lock: RowLock,
		private readonly historySize: number,
		private readonly onIdle: () => void,
	) {}

	async claim(key: string, request: ClaimRequest): Promise<ClaimAnswer> {
		return await new Promise<ClaimAnswer>((resolve, reject) => {
			this.claims.push({ key, ...request, resolve, reject });
			void this.write();
		});
	}

	async settle(key: string, outcome: Outcome): Promise<void> {
		return await new Promise<void>((resolve, reject) => {
			this.outcomes.push({ key, outcome, resolve, reject });
			void this.write();
		});
	}

	private async write(): Promise<void> {
		if (this.writing) return;
		this.writing = true;
		try {
			while (this.claims.length > 0 || this.outcomes.length > 0) {
				const claims = this.claims.splice(0);
				const outcomes = this.outcomes.splice(0);
				try {
					const answers = await this.lock.hold(
						async (stillHeld) => await this.batch(claims, outcomes, stillHeld),
					);
					claims.forEach((op, index) => op.resolve(answers[index]));
					for (const op of outcomes) op.resolve();
				} catch (error) {
					for (const op of [...claims, ...outcomes]) op.reject(error);
				}
			}
		} finally {
			this.writing = false;
			this.onIdle();
		}
	}

	/** One batch under the lock: outcomes written, claims checked and recorded; the claims' answers. */
	private async batch(
		claims: ClaimOp[],
		outcomes: OutcomeOp[],
		stillHeld: () => void,
	): Promise<ClaimAnswer[]> {
		const plan: Plan = { add: [], remove: [] };
		for (const { key, outcome } of outcomes) {
			plan.remove.push(FLIGHT + key);
			if (outcome === 'created') plan.add.push(CREATED + key);
			if (outcome === 'unknown') plan.add.push(UNKNOWN + key);
			else plan.remove.push(UNKNOWN + key);
		}
		const probes = claims.flatMap(({ key }) => probesOf(key));
		const checked = [...plan.add, ...probes];
		stillHeld();
		const before = await this.count();
		stillHeld();
		let held: Set<string>;
		try {
			const { processed } = await this.helpers.checkProcessedAndRecord(checked, 'node', {
				mode: 'entries',
				// Room for what the removal below takes out again (a new key's 3 probes that are not kept, an
				// outcome's flight entry), so that History Size keys remain after it.
				maxEntries: this.historySize + 3 * claims.length + outcomes.length,
			});
			held = new Set(processed.map(String));
		} catch (error) {
			await this.undo(checked, before);
			throw asLockError(error);
		}
		const answers = claims.map((claim) => decide(claim, held, plan));
		const remove = plan.remove.filter((entry) => !plan.add.includes(entry));
		// No stillHeld() from here on: the check is written, and the row is only right once this removal is.
		if (remove.length > 0) {
			await this.call(
				async () => await this.helpers.removeProcessed(remove, 'node', { mode: 'entries' }),
			);
		}
		return answers;
	}

	/**
	 * A check that failed may have been written before it failed (the connection dropped after the commit). The
	 * row's count tells: unchanged, nothing was written; grown by every checked entry, all were new and are taken
	 * out again. Anything between cannot be told apart, and the error says so.
	 */
	private async undo(checked: string[], before: number): Promise<void> {
		const after = await this.count().catch(() => undefined);
		if (after === before) return;
		if (after === before + new Set(checked).size) {
			await this.call(
				async () => await this.helpers.removeProcessed(checked, 'node', { mode: 'entries' }),
			);
			return;
		}
		throw new LockError(
			'store',
			"n8n's database failed while recording Idempotency Keys, and may have recorded part of the change",
		);
	}

	private async count(): Promise<number> {
		return await this.call(
			async () => await this.helpers.getProcessedDataCount('node', { mode: 'entries' }),
		);
	}

	private async call<T>(call: () => Promise<T>): Promise<T> {
		try {
			return await call();
		} catch (error) {
			throw asLockError(error);
		}
	}
}

const probesOf = (key: string) => [CREATED + key, key, UNKNOWN + key, FLIGHT + key];

/** A claim's answer from the entries the row held; adds to the plan what the answer keeps or drops. */
function decide(claim: ClaimOp, held: Set<string>, plan: Plan): ClaimAnswer {
	const { key } = claim;
	// Entries the check added that the answer does not keep come out again.
	const dropAdded = (...keep: string[]) =>
		plan.remove.push(...probesOf(key).filter((entry) => !held.has(entry) && !keep.includes(entry)));
	if (held.has(CREATED + key) || held.has(key)) {
		dropAdded();
		return 'created';
	}
	let state: ClaimAnswer = held.has(UNKNOWN + key)
		? 'unknown'
		: held.has(FLIGHT + key)
			? 'flight'
			: 'new';
	if (state === 'flight' && claim.expireFlight) {
		plan.remove.push(FLIGHT + key);
		state = 'unknown';
		if (!claim.takeUnknown) {
			dropAdded(UNKNOWN + key);
			return 'unknown';
		}
	}
	if (state === 'unknown' && claim.takeUnknown) {
		plan.remove.push(UNKNOWN + key);
		dropAdded(FLIGHT + key);
		plan.add.push(FLIGHT + key);
		return 'new';
	}
	if (state === 'new') {
		dropAdded(FLIGHT + key);
		return 'new';
	}
	dropAdded();
	return state;
}
