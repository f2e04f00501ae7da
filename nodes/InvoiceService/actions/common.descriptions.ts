import type { IDataObject, INodeProperties } from 'n8n-workflow';

import type { ClientOptions } from '../transport/request';

// Each option's `default` below is the only place its default is written: `readRunOptions` falls back to it.
const concurrency = {
	displayName: 'Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 50, numberPrecision: 0 },
	default: 5,
	description:
		'How many items are sent to the service at the same time. 1 sends one at a time. Output order always follows input order.',
} satisfies INodeProperties;

const maxRetryWait = {
	displayName: 'Max Retry Wait (Seconds)',
	name: 'maxRetryWait',
	type: 'number',
	typeOptions: { minValue: 0, numberPrecision: 0 },
	default: 120,
	description:
		'How long one item may wait in total for retries when the service is rate limiting (HTTP 429), temporarily unavailable (503) or unreachable. 0 disables retries.',
} satisfies INodeProperties;

const timeout = {
	displayName: 'Timeout (Ms)',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 1000, numberPrecision: 0 },
	default: 60000,
	description:
		'How long to wait for the service to answer one request. A create that times out is never re-sent automatically, because the service may have carried it out.',
} satisfies INodeProperties;

/** Options every operation has: how the run treats the service. Read once per run, from the first item. */
export const runOptions: INodeProperties[] = [concurrency, maxRetryWait, timeout];

export interface RunOptions extends ClientOptions {
	/** How many items are in flight at once (at least 1). */
	concurrency: number;
}

/** The run options as the router uses them, from the Options collection; an option not added takes its default. */
export function readRunOptions(options: IDataObject): RunOptions {
	const value = (option: { name: string; default: number }) =>
		Number(options[option.name] ?? option.default);
	return {
		concurrency: Math.max(1, Math.floor(value(concurrency)) || 1),
		timeoutMs: value(timeout),
		maxRetryWaitMs: value(maxRetryWait) * 1000,
	};
}
