import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { readResendCodes } from '../exactlyOnce/resendCodes';
import { optionalNumber } from '../helpers/validate';
import type { ClientOptions } from '../transport/request';
import type { Operation } from './operation';

/**
 * A resource's part of the node description: its Operation selector, built from its `operations` table (each
 * key is an option's `value`; the first is the default; listed by name, as n8n lists them), then each
 * operation's fields.
 */
export function resourceDescription(
	resource: string,
	operations: Record<string, Operation>,
): INodeProperties[] {
	const entries = Object.entries(operations);
	const [[defaultOperation]] = entries;
	const options = entries
		.map(([value, { option }]) => ({ ...option, value }))
		.sort((a, b) => a.name.localeCompare(b.name));
	return [
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource] } },
			options,
			default: defaultOperation,
		},
		...entries.flatMap(([, operation]) => operation.description),
	];
}

/** A number option: its limits are the editor's, and its `default` is the one used when it is left blank. */
export interface NumberOption extends INodeProperties {
	default: number;
	typeOptions: { minValue: number; maxValue?: number; numberPrecision?: number };
}

/**
 * A number option: the editor's limits (it offers whole numbers; an expression may still give a fraction, which
 * `readNumberOption` keeps unless told the option is a count), and the default used when it is left blank.
 */
export function numberOption(
	name: string,
	displayName: string,
	defaultValue: number,
	limits: { minValue: number; maxValue?: number },
): NumberOption {
	return {
		displayName,
		name,
		type: 'number',
		typeOptions: { ...limits, numberPrecision: 0 },
		default: defaultValue,
	};
}

/**
 * Said by every option read once per run: an expression in it is evaluated for the first item only, which a
 * builder used to per-item options would not guess.
 */
export const READ_ONCE_PER_RUN = 'Read once per run, from the first item.';

// Each option's `default` below is the only place its default is written: `readRunOptions` falls back to it.
const concurrency: NumberOption = {
	...numberOption('concurrency', 'Concurrency', 5, { minValue: 1, maxValue: 50 }),
	description: `How many items are sent to the service at the same time. 1 sends one at a time. Output order always follows input order. ${READ_ONCE_PER_RUN}`,
};

const maxRetryWait: NumberOption = {
	...numberOption('maxRetryWait', 'Max Retry Wait (Seconds)', 120, { minValue: 0 }),
	description: `How long one item may wait in total for retries when the service is rate limiting (HTTP 429), temporarily unavailable (503) or unreachable. 0 disables retries. ${READ_ONCE_PER_RUN}`,
};

const timeout: NumberOption = {
	...numberOption('timeout', 'Timeout (Ms)', 60000, { minValue: 1000 }),
	description: `How long to wait for the service to answer one request. A create that times out is never re-sent automatically, because the service may have carried it out (see Resend Unknown Outcomes Of). ${READ_ONCE_PER_RUN}`,
};

const resendUnknownOf: INodeProperties = {
	displayName: 'Resend Unknown Outcomes Of',
	name: 'resendUnknownOf',
	type: 'string',
	default: '',
	placeholder: 'e.g. K7QM2XR9',
	description: `The resend codes (separated by commas) of unknown outcomes to send again on a retry: each "outcome unknown" error gives its own code. Enter a code only after you checked the service and found no record. A code is used once: left here, it never resends a later unknown outcome. ${READ_ONCE_PER_RUN}`,
};

/** Options every operation has: how the run treats the service. Read once per run, from the first item. */
export const runOptions: INodeProperties[] = [concurrency, maxRetryWait, resendUnknownOf, timeout];

export interface RunOptions extends ClientOptions {
	/** How many items are in flight at once (at least 1). */
	concurrency: number;
	/** The resend codes of the unknown outcomes to send again (the user checked the service). */
	resendCodes: string[];
}

/**
 * Reads one number option within the editor's limits; blank (or not added) means its default. Throws FieldError.
 * Only a count must be whole: a fractional wait or time-out from an expression is meaningful and kept.
 */
export function readNumberOption(
	options: IDataObject,
	option: NumberOption,
	{ whole = false }: { whole?: boolean } = {},
): number {
	const { minValue, maxValue } = option.typeOptions;
	const value = optionalNumber(options[option.name], option.displayName, {
		min: minValue,
		max: maxValue,
		whole,
	});
	return value ?? option.default;
}

/** The Options the run options come from (none of them per item). */
export const runOptionNames = runOptions.map((option) => option.name);

/** The run options as the router uses them, from the Options collection (of the first item). Throws FieldError. */
export function readRunOptions(options: IDataObject): RunOptions {
	return {
		concurrency: readNumberOption(options, concurrency, { whole: true }),
		timeoutMs: readNumberOption(options, timeout),
		maxRetryWaitMs: readNumberOption(options, maxRetryWait) * 1000,
		resendCodes: readResendCodes(options.resendUnknownOf, resendUnknownOf.displayName),
	};
}
