import { sleep } from 'n8n-workflow';

/**
 * One per node run, shared by all concurrent workers: when the service says "slow down" (429, or 503 with
 * Retry-After), every worker waits, instead of each one hammering the service on its own schedule.
 * Lives only as long as one execute() call: no module-level state (queue-mode workers run many executions).
 */
export class Throttle {
	private pausedUntil = 0;

	/** Waits while the service has asked everybody to pause. */
	async ready(): Promise<void> {
		for (let wait = this.pausedUntil - Date.now(); wait > 0; wait = this.pausedUntil - Date.now()) {
			await sleep(wait);
		}
	}

	/** Pauses every worker for `ms` from now (a later pause never shortens an earlier one). */
	pause(ms: number): void {
		this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
	}
}

/** Exponential back-off with jitter (0.5–1× of 1 s, 2 s, 4 s … capped at 30 s) for when no Retry-After is given. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
	const ceiling = Math.min(30_000, 1000 * 2 ** attempt);
	return Math.round(ceiling * (0.5 + random() / 2));
}
