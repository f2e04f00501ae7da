import type { Claim, ClaimResult, IdempotencyKeys } from './idempotencyKeys';
import { saysLeftInFlight } from './lockErrors';

/**
 * A run's Idempotency Keys, claimed ahead of the items being sent and marked created in batches: a run's claims go
 * to n8n's database together (one write for many items, not one each), as do the marks of the keys created
 * meanwhile. The window is about AHEAD_SECONDS of the run's pace (items per second since its first turn, counted
 * over at least a second), between CLAIM_AHEAD_MIN and CLAIM_AHEAD_MAX items, and never more than an eighth of the
 * node's History Size: a key in flight takes two entries of the node's row, and the keys other runs hold in flight
 * must keep their place in it too (docs/reference.md, "History Size").
 */
export const AHEAD_SECONDS = 2;
export const CLAIM_AHEAD_MIN = 20;
export const CLAIM_AHEAD_MAX = 1000;
/** The share of History Size one run may claim ahead. */
const AHEAD_SHARE = 8;
/**
 * Created keys are marked together: with the next claims ahead, when half a window of them waits, or this long
 * after the first one (whichever comes first), and at the end of the run. A key of this run waited for by a later
 * item with the same key is marked within MARK_DELAY_MS.
 */
export const MARK_DELAY_MS = 500;

/** What a run needs to claim an item's key: which items are sent, and each one's key. */
export interface RunItems {
	itemCount: number;
	resendCodes: string[];
	/** Whether the item will be sent at its turn (not returned or failed from an earlier try's record). */
	sends(itemIndex: number): boolean;
	/** The item's key; throws when it cannot be read (its turn says why). */
	keyOf(itemIndex: number): string;
}

/** The items whose keys n8n's database did not take: they are said in the run's hints. */
export interface KeysNotWritten {
	/** Created, but not marked created: their key stays in flight (a later delivery fails as unknown). */
	notMarked: number[];
	/** Not sent (or claimed and not used), but their key could not be given back. */
	notGivenBack: number[];
	/**
	 * Not sent (found created or unknown, or never reached), but what their claim's check added could not be taken
	 * out again: their key looks in flight (a later delivery waits, then fails as unknown).
	 */
	leftInFlight: number[];
	/**
	 * Claimed ahead and never sent (their turn did not come, or their input was refused), but their claim gave up
	 * waiting for another execution's flight: their key is now unknown with this resend code, which only this
	 * warning names.
	 */
	expiredUnsent: Array<{ itemIndex: number; code: string }>;
}

/** An item's key and what its claim found. */
interface ClaimedFound {
	key: string;
	found: ClaimResult;
}

/** A key claimed ahead of its item's turn. */
interface ClaimedAhead {
	key: string;
	claim: Promise<ClaimResult>;
	/** When it was claimed (this process's monotonic clock). */
	at: number;
}

export class RunClaims {
	/** Keys claimed ahead, by item, until the item's turn takes its claim. */
	private readonly claimedAhead = new Map<number, ClaimedAhead>();
	/**
	 * Keys claimed ahead and given back before their item's turn (held too long): what their claim found when it was
	 * not new (a key created, unknown, or given up on with a resend code), for the item's turn; undefined when the
	 * item claims again.
	 */
	private readonly givenBack = new Map<number, Promise<ClaimedFound | undefined>>();
	/** Items below this have had their keys claimed ahead (or need none). */
	private claimedUpTo = 0;
	/** Keys being marked created or given back: written while the run goes on, all done before the node returns. */
	private readonly settling: Array<Promise<void>> = [];
	/**
	 * Created keys not yet handed to the store (see MARK_DELAY_MS), and the timed flush due for them (its number;
	 * 0: none). A flush made earlier (with claims, or half a window) cancels the timed one.
	 */
	private readonly toMark: Array<{ itemIndex: number; claim: Claim }> = [];
	private markDue = 0;
	private markFlushes = 0;
	/** The run's pace: items whose keys had their turn, and when the first one did. */
	private turns = 0;
	private firstTurnAt = 0;
	/** Whether the keys claimed ahead are being looked at for one held too long (heldTooLong). */
	private watchingHeld = false;
	private readonly failed: KeysNotWritten = {
		notMarked: [],
		notGivenBack: [],
		leftInFlight: [],
		expiredUnsent: [],
	};

	constructor(
		private readonly keys: IdempotencyKeys,
		private readonly items: RunItems,
	) {}

	/** At the item's turn: its key and what its claim found (claimed ahead with the next items when not yet). */
	async take(itemIndex: number): Promise<ClaimedFound> {
		if (this.turns++ === 0) this.firstTurnAt = this.keys.clock.now();
		this.claimAhead(itemIndex);
		const ahead = this.claimedAhead.get(itemIndex);
		this.claimedAhead.delete(itemIndex);
		const back = this.givenBack.get(itemIndex);
		this.givenBack.delete(itemIndex);
		const kept = await back;
		if (kept) return kept;
		const key = ahead ? ahead.key : this.items.keyOf(itemIndex);
		const found = await (ahead?.claim ??
			this.keys.claim(key, itemIndex, { resendCodes: this.items.resendCodes }));
		this.noteLeftInFlight(itemIndex, found);
		return { key, found };
	}

	/** A created key waits to be marked with others (MARK_DELAY_MS). */
	markCreated(itemIndex: number, claim: Claim): void {
		this.toMark.push({ itemIndex, claim });
		if (this.toMark.length >= this.aheadWindow() / 2) this.flushMarks();
		else if (!this.markDue) {
			const due = (this.markDue = ++this.markFlushes);
			void this.keys.clock.sleep(MARK_DELAY_MS).then(() => {
				if (this.markDue === due) this.flushMarks();
			});
		}
	}

	/**
	 * The item's turn is over: a key claimed ahead for it and not used (its input could not be read) is given
	 * back, so that nothing waits for it.
	 */
	async turnOver(itemIndex: number): Promise<void> {
		const ahead = this.claimedAhead.get(itemIndex);
		this.claimedAhead.delete(itemIndex);
		if (ahead)
			this.noteUnsent(itemIndex, await this.unsaid(itemIndex, this.giveBack(itemIndex, ahead)));
		const kept = this.givenBack.get(itemIndex);
		this.givenBack.delete(itemIndex);
		if (kept) this.noteUnsent(itemIndex, await this.unsaid(itemIndex, kept));
	}

	/** The run is over: every key it claimed is settled in n8n's database; what could not be, by item. */
	async written(): Promise<KeysNotWritten> {
		const unused = [...this.claimedAhead];
		this.claimedAhead.clear();
		const kept = [...this.givenBack];
		this.givenBack.clear();
		this.flushMarks();
		await Promise.all([
			...this.settling,
			...unused.map(async ([itemIndex, ahead]) =>
				this.noteUnsent(itemIndex, await this.unsaid(itemIndex, this.giveBack(itemIndex, ahead))),
			),
			...kept.map(async ([itemIndex, found]) =>
				this.noteUnsent(itemIndex, await this.unsaid(itemIndex, found)),
			),
		]);
		await this.keys.written();
		return this.failed;
	}

	/** Hands the waiting created keys to the store at once: they go in one batch. */
	private flushMarks(): void {
		this.markDue = 0;
		for (const { itemIndex, claim } of this.toMark.splice(0)) {
			this.settling.push(
				claim.created().catch(() => {
					this.failed.notMarked.push(itemIndex);
				}),
			);
		}
	}

	/** How many items ahead keys are claimed now (AHEAD_SECONDS of the run's pace so far). */
	private aheadWindow(): number {
		const seconds = Math.max((this.keys.clock.now() - this.firstTurnAt) / 1000, 1);
		const paced = Math.round((this.turns / seconds) * AHEAD_SECONDS);
		const kept = Math.max(1, Math.floor(this.keys.historySize / AHEAD_SHARE));
		return Math.min(CLAIM_AHEAD_MAX, kept, Math.max(CLAIM_AHEAD_MIN, paced));
	}

	/**
	 * Claims the keys of the items from this one to a window ahead that will be sent (not those a retry returns or
	 * fails without a request, nor those whose key cannot be read: their turn says why), half a window before they
	 * are needed, with the marks waiting: the store takes what arrives together in one write.
	 */
	private claimAhead(itemIndex: number): void {
		const window = this.aheadWindow();
		if (this.claimedUpTo - itemIndex > window / 2) return;
		const end = Math.min(this.items.itemCount, itemIndex + window);
		const at = this.keys.clock.now();
		for (let index = Math.max(itemIndex, this.claimedUpTo); index < end; index++) {
			if (!this.items.sends(index)) continue;
			let key: string;
			try {
				key = this.items.keyOf(index);
			} catch {
				continue;
			}
			const claim = this.keys.claim(key, index, { resendCodes: this.items.resendCodes });
			// Its item's turn reports a failure; until then it must not count as unhandled.
			claim.catch(() => undefined);
			this.claimedAhead.set(index, { key, claim, at });
		}
		this.claimedUpTo = end;
		this.flushMarks();
		void this.heldTooLong();
	}

	/**
	 * While keys are claimed ahead, gives back those held longer than `heldMs` (timing.ts) without their item's turn
	 * coming (the run stalled behind a slow service): their items claim them again at their turn.
	 */
	private async heldTooLong(): Promise<void> {
		if (this.watchingHeld) return;
		this.watchingHeld = true;
		try {
			while (this.claimedAhead.size > 0) {
				await this.keys.clock.sleep(this.keys.timing.ahead.checkMs);
				const now = this.keys.clock.now();
				// In the order they were claimed: the oldest first.
				for (const [index, ahead] of this.claimedAhead) {
					if (now - ahead.at < this.keys.timing.ahead.heldMs) break;
					this.claimedAhead.delete(index);
					const back = this.giveBack(index, ahead);
					// A failed claim's error is its item's, at its turn (claim()).
					back.catch(() => undefined);
					this.givenBack.set(index, back);
				}
			}
		} finally {
			this.watchingHeld = false;
		}
	}

	/** An item not sent whose key n8n's database left looking in flight goes to the run's warnings. */
	private noteLeftInFlight(itemIndex: number, found: ClaimResult | undefined): void {
		if (found && found.state !== 'new' && found.leftInFlight)
			this.failed.leftInFlight.push(itemIndex);
	}

	/**
	 * A key claimed ahead and not used goes back; one that was not claimed (created, unknown) stays, and what its
	 * claim found is returned (undefined: given back). A failed claim rejects: at its item's turn, the item fails
	 * with its error (it may say the key now looks in flight), never a later claim's answer without a word why.
	 */
	private async giveBack(
		itemIndex: number,
		{ key, claim }: ClaimedAhead,
	): Promise<ClaimedFound | undefined> {
		const found = await claim;
		this.noteLeftInFlight(itemIndex, found);
		if (found?.state !== 'new') return found && { key, found };
		await found.claim.giveBack().catch(() => {
			this.failed.notGivenBack.push(itemIndex);
		});
		return undefined;
	}

	/**
	 * What a key claimed ahead found, for an item whose turn is over or never comes: a failed claim is not its
	 * item's error then (its turn failed already, or the run's stop names the items not sent), but one that may
	 * have left the key looking in flight goes to the run's warnings (seed 11980: else a later delivery is told
	 * "unknown" with no word why).
	 */
	private async unsaid(
		itemIndex: number,
		found: Promise<ClaimedFound | undefined>,
	): Promise<ClaimedFound | undefined> {
		return await found.catch((error: unknown) => {
			if (saysLeftInFlight(error)) this.failed.leftInFlight.push(itemIndex);
			return undefined;
		});
	}

	/**
	 * An item not sent whose claim ahead gave up waiting for another execution's flight: its key is now unknown with
	 * a resend code nobody else was told, so the run's warnings name it.
	 */
	private noteUnsent(itemIndex: number, kept: ClaimedFound | undefined): void {
		if (kept?.found.state === 'unknown' && kept.found.code) {
			this.failed.expiredUnsent.push({ itemIndex, code: kept.found.code });
		}
	}
}
