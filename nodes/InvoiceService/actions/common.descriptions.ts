import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { optionalNumber } from '../helpers/validate';
import type { ClientOptions } from '../transport/request';

/** A number option: its limits are the editor's, and its `default` is the one used when it is left blank. */
interface NumberOption extends INodeProperties {
	default: number;
	typeOptions: { minValue: number; maxValue?: number; numberPrecision?: number };
}

// Each option's `default` below is the only place its default is written: `readRunOptions` falls back to it.
const concurrency: NumberOption = {
	displayName: 'Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 50, numberPrecision: 0 },
	default: 5,
	description:
		'How many items are sent to the service at the same time. 1 sends one at a time. Output order always follows input order.',
};

const maxRetryWait: NumberOption = {
	displayName: 'Max Retry Wait (Seconds)',
	name: 'maxRetryWait',
	type: 'number',
	typeOptions: { minValue: 0, numberPrecision: 0 },
	default: 120,
	description:
		'How long one item may wait in total for retries when the service is rate limiting (HTTP 429), temporarily unavailable (503) or unreachable. 0 disables retries.',
};

const timeout: NumberOption = {
	displayName: 'Timeout (Ms)',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 1000, numberPrecision: 0 },
	default: 60000,
	description:
		'How long to wait for the service to answer one request. A create that times out is never re-sent automatically, because the service may have carried it out.',
};

/** Options every operation has: how the run treats the service. Read once per run, from the first item. */
export const runOptions: INodeProperties[] = [concurrency, maxRetryWait, timeout];

export interface RunOptions extends ClientOptions {
	/** How many items are in flight at once (at least 1). */
	concurrency: number;
}

/**
 * Reads one number option within the editor's limits; blank (or not added) means its default. Throws FieldError.
 * Only a count must be whole: a fractional wait or time-out from an expression is meaningful and kept.
 */
function readNumberOption(options: IDataObject, option: NumberOption, whole = false): number {
	const { minValue, maxValue } = option.typeOptions;
	const value = optionalNumber(options[option.name], option.displayName, {
		min: minValue,
		max: maxValue,
		whole,
	});
	return value ?? option.default;
}

/** The run options as the router uses them, from the Options collection (of the first item). Throws FieldError. */
export function readRunOptions(options: IDataObject): RunOptions {
	return {
		concurrency: readNumberOption(options, concurrency, true),
		timeoutMs: readNumberOption(options, timeout),
		maxRetryWaitMs: readNumberOption(options, maxRetryWait) * 1000,
	};
}
