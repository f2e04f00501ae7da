import { createHash } from 'node:crypto';

import { sleep } from 'n8n-workflow';

/**
 * The service's "slow down", shared by everything in this n8n process that calls the same service with the
 * same key: every execution (a form or CRM fires one per event), every node and every worker of a run. When one
 * request is told to wait (any 429 or 503: for its Retry-After, else the back-off), the others wait for the same
 * moment instead of each finding the limit on its own; and after a 429 requests are paced, so that they do not
 * all come back on the same beat and hit the limit again.
 *
 * Requests wait in one queue per service, first come first served, and are let go one by one at the current
 * pace: a new pace or a new pause applies at once to everybody waiting (no request keeps a start time worked out
 * under an older pace).
 *
 * The pace is learned from the service's answers. At the first 429 it is what was sent in the second before the
 * refused request (a little under it). At each later 429 it is what the service accepted between the previous
 * 429 and this one, divided by the time between them: a limit refuses when its allowance is used up, so what
 * passed between two refusals is what it allows (a burst allowance counts once, pauses count as time). Between
 * refusals the pace rises slowly with each accepted request, so that a higher limit is found again. A 429 for a
 * request let go before the latest adjustment is an echo of the same overload and changes nothing but the pause.
 *
 * State: one small entry per service origin and key (the key only as a SHA-256 digest), at most MAX_SERVICES.
 * An entry is dropped once it has been idle for more than IDLE_MS (from its last request, slot or pause) with
 * nobody waiting. Lazily: every turn and refusal prunes first, so an idle entry stays until the pace is next used
 * (`activeServices()` prunes too, and shows it).
 */

// What is kept, and for how long.
/** An entry is dropped once this long has passed since its last use, pause or slot (strictly more). */
export const IDLE_MS = 30_000;
/** At most this many entries: a new service beyond them takes the place of the least recently used. */
export const MAX_SERVICES = 100;

// How a 429 sets the pace.
/** The first 429's pace is what was sent in this long before the refused request. */
const FIRST_WINDOW_MS = 1000;
/** Starts of requests are kept this long, for that measure. */
const RECENT_KEPT_MS = 5 * FIRST_WINDOW_MS;
/** The pace is set this much under the rate the service allowed between two refusals (a close measure). */
const BELOW_MEASURED = 0.98;
/** And this much under what was sent before the first refusal (a rougher one: a burst allowance is in it). */
const BELOW_FIRST = 0.95;
/** A refusal more than this long after the previous one is measured like a first one. */
const ANCHOR_MAX_MS = 60_000;
/** A refusal never takes the pace below this share of what it was. */
const MAX_DECREASE = 0.5;
/** A refusal that cannot be measured takes the pace down by this much. */
const STEP_DOWN = 0.9;

// How the pace moves between refusals, and how its slots are kept.
/** Requests per second added to the pace with each accepted request while pacing (about +1 % a second). */
const INCREASE_PER_ACCEPTED = 0.01;
/** The slowest pace: one request a second. */
const MIN_PER_SECOND = 1;
/** Once the pace has risen this high, it is dropped: the limit is far away. */
const UNPACED_ABOVE_PER_SECOND = 1000;
/** A pace's slots missed because the process was busy are made up for, but no more than this far back. */
const CATCH_UP_MS = 100;

/** A request's place in the pace: handed out by `turn`, given back with the service's answer. */
export interface Turn {
	/** When the request was let go. */
	at: number;
	/** Its number among the requests let go for this service. */
	seq: number;
	/** Whether it waited in the queue (a pause or the pace held it), not let go at once. */
	queued: boolean;
}

interface ServiceState {
	/** No request starts before this moment (the service's Retry-After). */
	pausedUntil: number;
	/** Requests per second while pacing; 0 = not paced. */
	ratePerSecond: number;
	/** The earliest start of the next paced request (a fixed slot: a late wake-up does not move later ones). */
	nextSlot: number;
	/** Requests let go so far; the next one gets this number. */
	nextSeq: number;
	/** The pace was last set when this many had been let go: a refusal of an earlier one is an echo. */
	adjustedSeq: number;
	/** The last refusal the pace was measured from, and the refusals since of requests let go after it. */
	anchor?: { at: number; seq: number; refusedSince: number };
	/** When the latest requests were let go (the last RECENT_KEPT_MS at least), for the first 429. */
	recentStarts: number[];
	/** Requests waiting for their turn, first come first served. */
	queue: Array<(turn: Turn) => void>;
	/** Whether a loop is letting the queue go (one per service). */
	draining: boolean;
	lastUsed: number;
}

export class ServicePace {
	private readonly services = new Map<string, ServiceState>();

	/** Waits for this request's turn in the service's queue; returns when it may start. */
	async turn(service: string): Promise<Turn> {
		const state = this.state(service);
		if (state.queue.length === 0 && this.dueAt(state) <= Date.now())
			return this.letGo(state, false);
		const turn = new Promise<Turn>((resolve) => state.queue.push(resolve));
		if (!state.draining) void this.drain(state);
		return await turn;
	}

	/** The service accepted a request (any answer but "slow down"). */
	accepted(service: string): void {
		const state = this.services.get(service);
		if (!state) return;
		state.lastUsed = Date.now();
		if (state.ratePerSecond > 0) {
			state.ratePerSecond += INCREASE_PER_ACCEPTED;
			if (state.ratePerSecond > UNPACED_ABOVE_PER_SECOND) state.ratePerSecond = 0;
		}
	}

	/**
	 * The service said "slow down" to the request of `turn`: everybody pauses for `waitMs`, and on a 429 the
	 * pace is set from what the service allowed (unless this is an echo of an earlier refusal).
	 */
	refused(
		service: string,
		turn: Turn,
		{ waitMs, rateLimited }: { waitMs: number; rateLimited: boolean },
	): void {
		const state = this.state(service);
		const now = Date.now();
		state.pausedUntil = Math.max(state.pausedUntil, now + waitMs);
		state.lastUsed = Math.max(state.lastUsed, state.pausedUntil);
		if (state.anchor && turn.seq >= state.anchor.seq) state.anchor.refusedSince++;
		if (rateLimited && turn.seq >= state.adjustedSeq) {
			state.ratePerSecond = Math.max(MIN_PER_SECOND, this.paceAfterRefusal(state, turn));
			state.adjustedSeq = state.nextSeq;
			state.anchor = { at: turn.at, seq: turn.seq, refusedSince: 1 };
		}
		// Paced requests resume at the end of the pause, one slot after another.
		if (state.ratePerSecond > 0) state.nextSlot = Math.max(state.nextSlot, state.pausedUntil);
	}

	/**
	 * Forgets every service, as a new process would. For tests that run the node in one process: a pause or a
	 * pace learned by one test must not slow the next.
	 */
	forgetAll(): void {
		this.services.clear();
	}

	/** How many services have state right now (after dropping the idle ones). */
	activeServices(): number {
		this.prune(Date.now());
		return this.services.size;
	}

	/**
	 * The pace after a (not echoed) 429 of `turn`'s request: a little under what the service accepted since the
	 * previous refusal ÷ the time since it, or at the first refusal, what was sent in the second before.
	 */
	private paceAfterRefusal(state: ServiceState, turn: Turn): number {
		const { anchor } = state;
		const sinceAnchor = anchor ? turn.at - anchor.at : Infinity;
		if (anchor && sinceAnchor >= FIRST_WINDOW_MS && sinceAnchor <= ANCHOR_MAX_MS) {
			const accepted = Math.max(0, turn.seq - anchor.seq - (anchor.refusedSince - 1));
			const measured = ((accepted * 1000) / sinceAnchor) * BELOW_MEASURED;
			// Fewer requests than the pace allowed (quiet spells) say little about the limit: never below half.
			return Math.max(measured, state.ratePerSecond * MAX_DECREASE);
		}
		// Refused again too soon (or too late) to measure: a step down from the pace that was too fast.
		if (state.ratePerSecond > 0) return state.ratePerSecond * STEP_DOWN;
		// recentStarts[i] is the start of request number firstSeq + i.
		const firstSeq = state.nextSeq - state.recentStarts.length;
		const sentBefore = state.recentStarts.filter(
			(at, i) => firstSeq + i < turn.seq && at > turn.at - FIRST_WINDOW_MS,
		).length;
		return ((sentBefore * 1000) / FIRST_WINDOW_MS) * BELOW_FIRST;
	}

	/** The earliest moment the next request may be let go. */
	private dueAt(state: ServiceState): number {
		return state.ratePerSecond > 0
			? Math.max(state.pausedUntil, state.nextSlot)
			: state.pausedUntil;
	}

	private letGo(state: ServiceState, queued: boolean): Turn {
		const now = Date.now();
		if (state.ratePerSecond > 0) {
			state.nextSlot = Math.max(state.nextSlot, now - CATCH_UP_MS) + 1000 / state.ratePerSecond;
		}
		state.recentStarts.push(now);
		// Kept a while longer than the window (a refusal may come back well after its request was let go), and
		// trimmed in chunks, so that thousands of requests a second do not shift the array one by one.
		if (state.recentStarts[0] <= now - 2 * RECENT_KEPT_MS) {
			const firstKept = state.recentStarts.findIndex((at) => at > now - RECENT_KEPT_MS);
			state.recentStarts.splice(0, firstKept === -1 ? state.recentStarts.length : firstKept);
		}
		state.lastUsed = now;
		return { at: now, seq: state.nextSeq++, queued };
	}

	/**
	 * Lets the waiting requests go one by one, each when it is due, until nobody waits. The due moment is read
	 * again after every sleep: a refusal meanwhile (a longer pause, a slower pace) applies to everybody waiting.
	 */
	private async drain(state: ServiceState): Promise<void> {
		state.draining = true;
		try {
			while (state.queue.length > 0) {
				const wait = this.dueAt(state) - Date.now();
				if (wait > 0) await sleep(wait);
				else state.queue.shift()!(this.letGo(state, true));
			}
		} finally {
			state.draining = false;
		}
	}

	private state(service: string): ServiceState {
		const now = Date.now();
		this.prune(now);
		let state = this.services.get(service);
		if (!state) {
			if (this.services.size >= MAX_SERVICES) this.dropLeastRecentlyUsed();
			state = {
				pausedUntil: 0,
				ratePerSecond: 0,
				nextSlot: 0,
				nextSeq: 0,
				adjustedSeq: 0,
				recentStarts: [],
				queue: [],
				draining: false,
				lastUsed: now,
			};
			this.services.set(service, state);
		}
		return state;
	}

	/** Drops entries idle for IDLE_MS; never one with requests waiting in it. */
	private prune(now: number): void {
		for (const [service, state] of this.services) {
			const idleSince = Math.max(state.lastUsed, state.pausedUntil, state.nextSlot);
			if (state.queue.length === 0 && now - idleSince > IDLE_MS) this.services.delete(service);
		}
	}

	private dropLeastRecentlyUsed(): void {
		let oldest: string | undefined;
		let oldestUse = Infinity;
		for (const [service, state] of this.services) {
			if (state.queue.length === 0 && state.lastUsed < oldestUse) {
				[oldest, oldestUse] = [service, state.lastUsed];
			}
		}
		if (oldest !== undefined) this.services.delete(oldest);
	}
}

/** The one pace per n8n process (a node's module is loaded once per process and serves every execution). */
export const servicePace = new ServicePace();

/** The pace's name for a service and key: the origin and a digest of the key, never the key itself. */
export function serviceIdentity(origin: string, apiKey: string): string {
	return `${origin} ${createHash('sha256').update(apiKey).digest('base64url')}`;
}

/** Exponential back-off with jitter (0.5–1× of 1 s, 2 s, 4 s … capped at 30 s) for when no Retry-After is given. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
	const ceiling = Math.min(30_000, 1000 * 2 ** attempt);
	return Math.round(ceiling * (0.5 + random() / 2));
}
