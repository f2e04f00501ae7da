import { createHash } from 'node:crypto';

import { sleep } from 'n8n-workflow';

/**
 * The service's "slow down", shared by everything in this n8n process that calls the same service with the
 * same key: every execution (a form or CRM fires one per event), every node and every worker of a run. When one
 * request is told to wait (429, or 503 with Retry-After), the others wait for the same moment instead of each
 * finding the limit on its own; and after a 429 requests are paced, so that they do not all come back on the
 * same beat and hit the limit again.
 *
 * The pace is learned from the service's answers: after a 429 the rate becomes what the service accepted in the
 * last second (a little under it), then rises slowly with each accepted request until the next 429 (additive
 * increase, reset to the measured rate on refusal). A 429 for a request sent before the latest adjustment is an
 * echo of the same overload and changes nothing. When a pause ends, up to a second's worth of requests at the
 * pace go at once: a rate limit's capacity comes back during the pause, and pacing alone would waste it.
 *
 * State: one small entry per service origin and key (the key only as a SHA-256 digest), at most MAX_SERVICES.
 * An entry is dropped once it has been idle for IDLE_MS with no pause or pacing still ahead; every call prunes,
 * so nothing outlives its use by more than that (`activeServices()` shows it).
 */

const IDLE_MS = 30_000;
const MAX_SERVICES = 100;
/** Accepted answers older than this do not count towards the measured rate. */
const RATE_WINDOW_MS = 1000;
/** After a 429 the pace starts this much under the rate the service accepted. */
const START_BELOW = 0.95;
/** Requests per second added to the pace with each accepted request while pacing. */
const INCREASE_PER_ACCEPTED = 0.02;
/** At most this much of a pause is made up for with requests sent at once when it ends. */
const MAX_CREDIT_MS = 1000;
/** Once the pace has risen this high, it is dropped: the limit is far away. */
const UNPACED_ABOVE_PER_SECOND = 1000;

interface ServiceState {
	/** No request starts before this moment (the service's Retry-After). */
	pausedUntil: number;
	/** Requests per second while pacing; 0 = not paced. */
	ratePerSecond: number;
	/** The earliest start of the next paced request. */
	nextStart: number;
	/** When the pace was last set from a refusal: older requests' 429s are echoes. */
	adjustedAt: number;
	/** Times of recently accepted answers (within RATE_WINDOW_MS). */
	accepted: number[];
	lastUsed: number;
}

class ServicePace {
	private readonly services = new Map<string, ServiceState>();

	/** Waits for this request's turn; returns when it may start (the moment its 429 would be judged by). */
	async turn(service: string): Promise<number> {
		const state = this.state(service);
		let now = Date.now();
		let start = Math.max(now, state.pausedUntil);
		if (state.ratePerSecond > 0) {
			start = Math.max(start, state.nextStart);
			state.nextStart = start + 1000 / state.ratePerSecond;
		}
		state.lastUsed = Math.max(state.lastUsed, start);
		// A later refusal may move the pause while this one waits: wait again until the pause is behind.
		while (start > now) {
			await sleep(start - now);
			now = Date.now();
			start = Math.max(start, state.pausedUntil);
		}
		return now;
	}

	/** The service accepted a request (any answer but "slow down"). */
	accepted(service: string): void {
		const state = this.services.get(service);
		if (!state) return;
		const now = Date.now();
		state.accepted.push(now);
		while (state.accepted.length > 0 && state.accepted[0] <= now - RATE_WINDOW_MS) {
			state.accepted.shift();
		}
		state.lastUsed = now;
		if (state.ratePerSecond > 0) {
			state.ratePerSecond += INCREASE_PER_ACCEPTED;
			if (state.ratePerSecond > UNPACED_ABOVE_PER_SECOND) state.ratePerSecond = 0;
		}
	}

	/**
	 * The service said "slow down" to a request that started at `startedAt`: everybody pauses for `waitMs`, and
	 * on a 429 the pace is set from what the service accepted (unless this is an echo of an earlier refusal).
	 */
	refused(service: string, startedAt: number, waitMs: number, rateLimited: boolean): void {
		const state = this.state(service);
		const now = Date.now();
		state.pausedUntil = Math.max(state.pausedUntil, now + waitMs);
		state.lastUsed = Math.max(state.lastUsed, state.pausedUntil);
		if (rateLimited && startedAt >= state.adjustedAt) {
			const acceptedLastSecond = state.accepted.filter((at) => at > now - RATE_WINDOW_MS).length;
			state.ratePerSecond = Math.max(1, acceptedLastSecond * START_BELOW);
			state.adjustedAt = now;
			state.accepted = [];
			state.nextStart = 0;
		}
		if (state.ratePerSecond === 0) return;
		// During the pause the service's capacity came back: up to one second of it (at the pace) goes out at
		// once when the pause ends, the rest follows at the pace.
		const credit = Math.min(waitMs, MAX_CREDIT_MS);
		state.nextStart = Math.max(state.nextStart, state.pausedUntil - credit);
	}

	/** How many services have state right now (after dropping the idle ones). */
	activeServices(): number {
		this.prune(Date.now());
		return this.services.size;
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
				nextStart: 0,
				adjustedAt: 0,
				accepted: [],
				lastUsed: now,
			};
			this.services.set(service, state);
		}
		return state;
	}

	private prune(now: number): void {
		for (const [service, state] of this.services) {
			const idleSince = Math.max(state.lastUsed, state.pausedUntil, state.nextStart);
			if (now - idleSince > IDLE_MS) this.services.delete(service);
		}
	}

	private dropLeastRecentlyUsed(): void {
		let oldest: string | undefined;
		let oldestUse = Infinity;
		for (const [service, state] of this.services) {
			if (state.lastUsed < oldestUse) [oldest, oldestUse] = [service, state.lastUsed];
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
