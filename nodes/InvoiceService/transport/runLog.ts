import type { Logger } from 'n8n-workflow';

import { seconds, type Failure } from './errors';

/**
 * What one run of the node did with the service, told through n8n's logger: each wait and retry (info), each
 * give-up (warn), and a one-line summary at the end. Messages carry item numbers, endpoints, HTTP codes and
 * durations only: never a header, a body or the key.
 */
export class RunLog {
	private readonly itemsSent = new Set<number>();
	private readonly itemsRetried = new Set<number>();
	private retries = 0;
	private totalWaitMs = 0;
	private held = { requests: 0, ms: 0 };
	/** Items not sent because an earlier one showed none could be, by what they were told. */
	private notSent = new Map<string, number>();

	constructor(
		private readonly logger: Logger,
		private readonly nodeName: string,
	) {}

	/** A request for this item is about to go out. */
	sent(itemIndex: number): void {
		this.itemsSent.add(itemIndex);
	}

	/** The item waits `delayMs` before sending again; `shared` when every worker of the run pauses with it. */
	waiting(
		itemIndex: number,
		endpoint: string,
		failure: Failure,
		{ delayMs, shared }: { delayMs: number; shared: boolean },
	): void {
		this.itemsRetried.add(itemIndex);
		this.retries++;
		this.totalWaitMs += delayMs;
		const who = shared
			? 'every request to the service with this key (in any execution) pauses'
			: 'retrying';
		this.logger.info(
			`${this.prefix(itemIndex, endpoint)} ${answer(failure)}; ${who} for ${seconds(delayMs)}`,
			{ node: this.nodeName, itemIndex, httpCode: failure.httpCode, waitMs: delayMs },
		);
	}

	/** The item's retry budget is spent: it fails with `failure`. */
	gaveUp(itemIndex: number, endpoint: string, failure: Failure, waitedMs: number): void {
		this.logger.warn(
			`${this.prefix(itemIndex, endpoint)} ${answer(failure)}; gave up after waiting ${seconds(waitedMs)} (Max Retry Wait)`,
			{ node: this.nodeName, itemIndex, httpCode: failure.httpCode, waitedMs },
		);
	}

	/** A request waited `ms` for its turn in the service's pace (after the service said "slow down"). */
	heldBack(ms: number): void {
		this.held.requests++;
		this.held.ms += ms;
	}

	/** An item was not sent because an earlier one showed that none could be (`Failure.laterItems`). */
	notSentAfter(laterItems: Failure): void {
		this.notSent.set(laterItems.message, (this.notSent.get(laterItems.message) ?? 0) + 1);
	}

	/** What the run did that a user should see beside its output (n8n execution hints), one line each. */
	hints(): string[] {
		const hints: string[] = [];
		if (this.retries > 0) {
			hints.push(
				`${this.itemsRetried.size} item(s) were retried ${this.retries} time(s) after the service asked to wait or could not be reached; ${seconds(this.totalWaitMs)} waited in total.`,
			);
		}
		if (this.held.requests > 0) {
			hints.push(
				`${this.held.requests} request(s) were held back ${seconds(this.held.ms)} in total to stay under the service's rate limit (shared with other executions using the same key).`,
			);
		}
		for (const [message, count] of this.notSent) {
			hints.push(`${count} item(s) were not sent: ${message.replace(/^Not sent: /, '')}.`);
		}
		return hints;
	}

	/** The one-line summary of the run. */
	summary(): void {
		this.logger.info(
			`Invoice Service "${this.nodeName}": ${this.itemsSent.size} item(s) sent, ${this.itemsRetried.size} retried (${this.retries} retries), ${seconds(this.totalWaitMs)} waited in total, ${this.held.requests} request(s) held back ${seconds(this.held.ms)} by the rate-limit pace`,
			{
				node: this.nodeName,
				itemsSent: this.itemsSent.size,
				itemsRetried: this.itemsRetried.size,
				retries: this.retries,
				totalWaitMs: this.totalWaitMs,
				heldBackRequests: this.held.requests,
				heldBackMs: this.held.ms,
			},
		);
	}

	private prefix(itemIndex: number, endpoint: string): string {
		return `Invoice Service "${this.nodeName}", item ${itemIndex}, ${endpoint}:`;
	}
}

function answer(failure: Failure): string {
	return failure.httpCode !== undefined ? `HTTP ${failure.httpCode}` : 'no answer (network)';
}
