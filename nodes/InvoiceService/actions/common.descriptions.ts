import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { optionalNumber } from '../helpers/validate';

/** Options every operation has: how the run treats the service. Read once per run, from the first item. */
export const runOptions: INodeProperties[] = [
	{
		displayName: 'Concurrency',
		name: 'concurrency',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 50, numberPrecision: 0 },
		default: 5,
		description:
			'How many items are sent to the service at the same time. 1 sends one at a time. Output order always follows input order.',
	},
	{
		displayName: 'Max Retry Wait (Seconds)',
		name: 'maxRetryWait',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 0 },
		default: 120,
		description:
			'How long one item may wait in total for retries when the service is rate limiting (HTTP 429), temporarily unavailable (503) or unreachable. 0 disables retries.',
	},
	{
		displayName: 'Timeout (Ms)',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1000, numberPrecision: 0 },
		default: 60000,
		description:
			'How long to wait for the service to answer one request. A create that times out is never re-sent automatically, because the service may have carried it out.',
	},
];

export interface RunSettings {
	concurrency: number;
	timeoutMs: number;
	maxRetryWaitMs: number;
}

/**
 * Reads the run options (of the first item) with the editor's limits; blank means the default. Throws FieldError.
 */
export function readRunOptions(options: IDataObject): RunSettings {
	const concurrency = optionalNumber(options.concurrency, 'Concurrency', {
		min: 1,
		max: 50,
		whole: true,
	});
	const maxRetryWait = optionalNumber(options.maxRetryWait, 'Max Retry Wait (Seconds)', { min: 0 });
	const timeout = optionalNumber(options.timeout, 'Timeout (Ms)', { min: 1000 });
	return {
		concurrency: concurrency ?? 5,
		timeoutMs: timeout ?? 60_000,
		maxRetryWaitMs: (maxRetryWait ?? 120) * 1000,
	};
}
