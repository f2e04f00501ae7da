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
		delayMs: number,
		shared: boolean,
	): void {
		this.itemsRetried.add(itemIndex);
		this.retries++;
		this.totalWaitMs += delayMs;
		const who = shared ? 'all requests of this run pause' : 'retrying';
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

	/** The one-line summary of the run. */
	summary(): void {
		this.logger.info(
			`Invoice Service "${this.nodeName}": ${this.itemsSent.size} item(s) sent, ${this.itemsRetried.size} retried (${this.retries} retries), ${seconds(this.totalWaitMs)} waited in total`,
			{
				node: this.nodeName,
				itemsSent: this.itemsSent.size,
				itemsRetried: this.itemsRetried.size,
				retries: this.retries,
				totalWaitMs: this.totalWaitMs,
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
