// The fault plan: which fault a create-* request gets and how long each answer waits (seeded draws, so a
// seed replays the same sequence; a fault armed for one chosen request overrides its draw), and the token
// bucket of the rate limit.
import {
	FAULT_KINDS,
	type FaultKind,
	type OneShotFault,
	type OneShotRule,
	type RateLimit,
	type SandboxOptions,
} from './options';

/** mulberry32: a tiny deterministic PRNG; Math.random when no seed is given. */
export function createRng(seed?: number): () => number {
	if (seed === undefined || seed === null) return Math.random;
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let mixed = state;
		mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
		mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
		return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
	};
}

// Each stream draws from its own generator, so PDF downloads do not shift the create-* sequence.
const JITTER_SEED_OFFSET = 0x9e3779b9;
const PDF_JITTER_SEED_OFFSET = 0x7f4a7c15;

export interface CreatePlan {
	fault: FaultKind | undefined;
	latencyMs: number;
}

export type TokenResult = { ok: true } | { ok: false; retryAfterSeconds: number };

export class FaultPlan {
	private faultDraws: () => number = Math.random;
	private jitterDraws: () => number = Math.random;
	private pdfJitterDraws: () => number = Math.random;
	private tokens = 0;
	private tokensCountedAt = 0;
	/** Create-* requests that used a key since revokeKeysAfter was set (or the last reset). */
	private keyUses = 0;
	/** Faults armed for one chosen request each (`faultOnce`), oldest first. */
	private oneShots: OneShotRule[] = [];

	constructor(private readonly options: () => SandboxOptions) {
		this.restart();
	}

	/** Restarts the seeded draws and refills the bucket (start, reset). */
	restart(): void {
		this.reseed();
		this.refillBucket();
		this.keyUses = 0;
		this.oneShots = [];
	}

	/** Arms a fault for the next create-* request whose body contains the rule's text. */
	armOnce(rule: OneShotRule): void {
		this.oneShots.push(rule);
	}

	/** The armed fault this request's body matches (disarmed: it fires once), or undefined. */
	takeOnce(body: string): OneShotFault | undefined {
		const index = this.oneShots.findIndex((rule) => body.includes(rule.bodyContains));
		if (index < 0) return undefined;
		return this.oneShots.splice(index, 1)[0].fault;
	}

	/** After a configuration change: a new seed restarts the draws, a new rate limit starts full. */
	optionsChanged(previous: SandboxOptions): void {
		const next = this.options();
		if (JSON.stringify(next.rateLimit) !== JSON.stringify(previous.rateLimit)) this.refillBucket();
		if (next.seed !== previous.seed) this.reseed();
		if (next.revokeKeysAfter !== previous.revokeKeysAfter) this.keyUses = 0;
	}

	/** Whether a valid key still works for this request (the `revokeKeysAfter` fault); counts the use. */
	keyStillValid(): boolean {
		const limit = this.options().revokeKeysAfter;
		if (limit === null) return true;
		if (this.keyUses >= limit) return false;
		this.keyUses++;
		return true;
	}

	/** One fault draw and one jitter draw, in arrival order of create-* requests. */
	drawForCreate(): CreatePlan {
		return {
			fault: this.pickFault(this.faultDraws()),
			latencyMs: this.latency(this.jitterDraws()),
		};
	}

	pdfLatencyMs(): number {
		return this.latency(this.pdfJitterDraws());
	}

	takeToken(): TokenResult {
		const limit = this.options().rateLimit;
		if (!limit) return { ok: true };
		const now = Date.now();
		const refilled = ((now - this.tokensCountedAt) / 1000) * limit.perSecond;
		this.tokens = Math.min(limit.burst, this.tokens + refilled);
		this.tokensCountedAt = now;
		if (this.tokens >= 1) {
			this.tokens -= 1;
			return { ok: true };
		}
		return {
			ok: false,
			retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / limit.perSecond)),
		};
	}

	rateLimit(): RateLimit | undefined {
		return this.options().rateLimit;
	}

	private pickFault(uniform: number): FaultKind | undefined {
		const rates = this.options().faults;
		let cumulative = 0;
		for (const kind of FAULT_KINDS) {
			cumulative += rates[kind];
			if (uniform < cumulative) return kind;
		}
		return undefined;
	}

	/** latency ± jitter, uniform, floored at 0. */
	private latency(uniform: number): number {
		const { latencyMs, jitterMs } = this.options();
		return Math.max(0, latencyMs + (uniform * 2 - 1) * jitterMs);
	}

	private reseed(): void {
		const seed = this.options().seed;
		const offset = (by: number) => (seed === undefined ? undefined : seed + by);
		this.faultDraws = createRng(seed);
		this.jitterDraws = createRng(offset(JITTER_SEED_OFFSET));
		this.pdfJitterDraws = createRng(offset(PDF_JITTER_SEED_OFFSET));
	}

	private refillBucket(): void {
		this.tokens = this.options().rateLimit?.burst ?? 0;
		this.tokensCountedAt = Date.now();
	}
}
