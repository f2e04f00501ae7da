/**
 * The requests that start within this long of each other share one deadline signal: each request's deadline is
 * then between Timeout and Timeout + WINDOW_MS after it started, never earlier.
 */
export const WINDOW_MS = 50;
/**
 * At most this many requests share one signal: every request adds a listener to it while it runs, and Node warns
 * of a leak past 10 listeners on one signal.
 */
export const WINDOW_USES = 8;

/** A request's total deadline, and the signal that cuts it: the deadline, or the execution's Stop. */
export interface Deadline {
	deadline: AbortSignal;
	signal: AbortSignal;
}

/**
 * The total deadlines of one run's requests. A deadline of its own for every request (a timer, and a signal
 * joined with the execution's cancel signal) costs about as much CPU as the rest of the node's own work on an
 * item; requests that start together share one.
 */
export class Deadlines {
	private window: (Deadline & { cancel?: AbortSignal; closesAt: number; uses: number }) | undefined;

	/**
	 * The time-out to give n8n's request helper (an idle time-out: no byte for that long), past the latest shared
	 * deadline, so that the total deadline always cuts first and the failure says it was the time-out (the
	 * helper's own cut of a trickling body reads as a broken connection).
	 */
	readonly helperTimeoutMs: number;

	constructor(private readonly timeoutMs: number) {
		this.helperTimeoutMs = timeoutMs + WINDOW_MS;
	}

	/** The deadline of a request starting now; `cancel` (the execution's cancel signal) also aborts its signal. */
	next(cancel: AbortSignal | undefined): Deadline {
		const now = Date.now();
		const open = this.window;
		if (open && open.cancel === cancel && now < open.closesAt && open.uses < WINDOW_USES) {
			open.uses++;
			return open;
		}
		const deadline = AbortSignal.timeout(this.timeoutMs + WINDOW_MS);
		const signal = cancel ? AbortSignal.any([deadline, cancel]) : deadline;
		this.window = { deadline, signal, cancel, closesAt: now + WINDOW_MS, uses: 1 };
		return this.window;
	}
}
