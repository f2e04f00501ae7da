import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { KeySettings } from '../exactlyOnce/idempotencyKeys';
import {
	READ_ONCE_PER_RUN,
	numberOption,
	type NumberOption,
	readNumberOption,
	readRunOptions,
	runOptionNames,
} from './common.descriptions';

/**
 * The Idempotency Key's fields and the node's Already Created output: what the editor shows of the keys. What a
 * key does is exactlyOnce/idempotencyKeys.ts's.
 */

export const idempotencyKeyOption: INodeProperties = {
	displayName: 'Idempotency Key',
	name: 'idempotencyKey',
	type: 'string',
	default: '',
	placeholder: 'e.g. {{ $json.body.eventId }}',
	hint: "An expression over the event's own ID. After a Webhook trigger the event is under body: {{ $json.body.eventId }}",
	description:
		"A value unique to the event this item comes from. An item whose key already created a record through this node (in any earlier execution of the workflow, manual runs included) is not sent again and goes to the node's Already Created output. An item whose key is blank fails, with nothing sent; for no check, remove this option.",
};

export const historySizeOption: NumberOption = {
	...numberOption('historySize', 'History Size', 10000, { minValue: 1 }),
	description: `How many Idempotency Keys this node remembers; beyond that the oldest are forgotten (and could be created again). ${READ_ONCE_PER_RUN}`,
};

/** The options that make keys work, in the order the Options collection lists them. */
export const idempotencyOptions: INodeProperties[] = [idempotencyKeyOption, historySizeOption];

/** The Options the keys' settings come from: the run options' and History Size (never the per-item key). */
export const keySettingNames = [...runOptionNames, historySizeOption.name];

/** The keys' settings from the node's options (run-wide: the first item's). Throws FieldError. */
export function readKeySettings(options: IDataObject): KeySettings {
	const { maxRetryWaitMs, timeoutMs } = readRunOptions(options);
	return {
		historySize: readNumberOption(options, historySizeOption, { whole: true }),
		createWaitMs: maxRetryWaitMs + timeoutMs,
		keyField: idempotencyKeyOption.displayName,
		purpose: 'idempotency',
	};
}

/**
 * The node's outputs for its parameters: with an Idempotency Key set (an expression counts as set), a second
 * output for the items already created in an earlier execution. Handed to n8n as the text of an expression
 * (`outputs` in the node description), so it refers to nothing outside itself.
 */
export function configuredOutputs(parameters: {
	options?: { idempotencyKey?: unknown };
}): Array<{ type: 'main'; displayName?: string }> {
	const key = parameters.options?.idempotencyKey;
	const set =
		typeof key === 'number' || (typeof key === 'string' && key.trim() !== '' && key.trim() !== '=');
	return set
		? [
				{ type: 'main', displayName: 'Created' },
				{ type: 'main', displayName: 'Already Created' },
			]
		: [{ type: 'main' }];
}

/** Whether the node's Idempotency Key parameter is set: the node then has its Already Created output. */
export function keysConfigured(parameters: IDataObject): boolean {
	return configuredOutputs(parameters).length === 2;
}

/**
 * Whether the node checks keys: the Idempotency Key option is added, whatever its value. One added and left blank
 * (or an expression that gives nothing for an item) fails the item, never turns the check off unseen; only an
 * option not added means no check.
 */
export function keysChecked(parameters: IDataObject): boolean {
	return (parameters.options as IDataObject | undefined)?.idempotencyKey !== undefined;
}

/** The Idempotency Key parameter as written (`={{ $json.eventId }}`), for a message. */
export function keyParameter(context: IExecuteFunctions): unknown {
	return (context.getNode().parameters.options as IDataObject | undefined)?.idempotencyKey;
}
