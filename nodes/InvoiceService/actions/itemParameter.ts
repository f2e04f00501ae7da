import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { jsonPathOf, primitiveAt } from '../helpers/jsonReference';

/**
 * How a parameter is read for each item, decided once per run from its raw value (the same for every item):
 * a reference to a field of the item, a fixed text, number or boolean, or n8n's own reading.
 */
type Reading =
	| { path: string[] }
	| { constant: string | number | boolean }
	| { names: string[] }
	| { n8n: true };

/** The readings of one run, by its context (a run's context and its node's parameters do not change). */
const readingsByRun = new WeakMap<object, Map<string, Reading>>();

/** A run's reading under `id`, decided by `decide` on first use. */
function reading(context: IExecuteFunctions, id: string, decide: () => Reading): Reading {
	let readings = readingsByRun.get(context);
	if (!readings) readingsByRun.set(context, (readings = new Map()));
	let found = readings.get(id);
	if (!found) readings.set(id, (found = decide()));
	return found;
}

/**
 * A parameter's reading. `fallback` is part of its id: where the parameter is not set, its raw value is the
 * fallback given. One given as an object is not remembered.
 */
function parameterReading(
	context: IExecuteFunctions,
	name: string,
	itemIndex: number,
	fallback: unknown,
): Reading {
	const decide = () =>
		readingOfRaw(context.getNodeParameter(name, itemIndex, fallback, { rawExpressions: true }));
	if (fallback !== null && typeof fallback === 'object') return decide();
	return reading(context, `${name}\u0000${typeof fallback}:${String(fallback)}`, decide);
}

/**
 * One item's value of a parameter, as `getNodeParameter` gives it. A parameter that is one reference to a field of
 * the item (`{{ $json.email }}`) whose value is text, a number or a boolean is read from the item itself, the
 * value n8n's expression would give (the item's `$json` is the node's input item of that index), without the cost
 * of n8n's expression engine (helpers/jsonReference.ts). A fixed text, number or boolean (no expression) is that
 * value, as n8n gives it for this node's parameters (none has a `validateType` that could change it: a test
 * checks). Everything else goes to n8n.
 */
export function itemParameter(
	context: IExecuteFunctions,
	name: string,
	itemIndex: number,
	fallback: unknown,
): unknown {
	const how = parameterReading(context, name, itemIndex, fallback);
	if ('constant' in how) return how.constant;
	if ('path' in how) {
		const value = primitiveAt(context.getInputData()[itemIndex]?.json, how.path);
		if (value !== undefined) return value;
	}
	return context.getNodeParameter(name, itemIndex, fallback);
}

function readingOfRaw(raw: unknown): Reading {
	const path = jsonPathOf(raw);
	if (path) return { path };
	if (typeof raw === 'string' && !raw.startsWith('=')) return { constant: raw };
	if (typeof raw === 'number' || typeof raw === 'boolean') return { constant: raw };
	return { n8n: true };
}

/**
 * One item's values of the named fields of a collection parameter (Options, Additional Fields), each read as
 * `itemParameter` reads one: the fields not named are not evaluated (the Idempotency Key among the options is read
 * on its own, once).
 */
export function itemFields(
	context: IExecuteFunctions,
	collection: string,
	itemIndex: number,
	names: readonly string[],
): IDataObject {
	const how = reading(context, `${collection}\u0000fields:${names.join(',')}`, () => {
		const raw = context.getNodeParameter(collection, itemIndex, {}, { rawExpressions: true });
		if (raw === null || typeof raw !== 'object') return { names: [] };
		return { names: names.filter((name) => (raw as IDataObject)[name] !== undefined) };
	});
	const fields: IDataObject = {};
	for (const name of 'names' in how ? how.names : []) {
		fields[name] = itemParameter(
			context,
			`${collection}.${name}`,
			itemIndex,
			undefined,
		) as IDataObject[string];
	}
	return fields;
}
