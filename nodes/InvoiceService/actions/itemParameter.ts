import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { jsonPathOf, primitiveAt } from '../helpers/jsonReference';

/**
 * One item's value of a parameter, as `getNodeParameter` gives it. A parameter that is one reference to a field of
 * the item (`{{ $json.email }}`) whose value is text, a number or a boolean is read from the item itself, the
 * value n8n's expression would give (the item's `$json` is the node's input item of that index), without the cost
 * of n8n's expression engine (helpers/jsonReference.ts). Everything else goes to n8n.
 */
export function itemParameter(
	context: IExecuteFunctions,
	name: string,
	itemIndex: number,
	fallback: unknown,
): unknown {
	const path = jsonPathOf(
		context.getNodeParameter(name, itemIndex, fallback, { rawExpressions: true }),
	);
	if (path) {
		const value = primitiveAt(context.getInputData()[itemIndex]?.json, path);
		if (value !== undefined) return value;
	}
	return context.getNodeParameter(name, itemIndex, fallback);
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
	const raw = context.getNodeParameter(collection, itemIndex, {}, { rawExpressions: true });
	const fields: IDataObject = {};
	if (raw === null || typeof raw !== 'object') return fields;
	for (const name of names) {
		if ((raw as IDataObject)[name] === undefined) continue;
		fields[name] = itemParameter(
			context,
			`${collection}.${name}`,
			itemIndex,
			undefined,
		) as IDataObject[string];
	}
	return fields;
}
