/**
 * A parameter whose whole value is one reference to a field of the item, `{{ $json.email }}` or
 * `{{ $json["first name"].value }}`, means "that field's value": the node can read it from the item itself. n8n
 * 2.x evaluates every expression in an isolated VM, about 0.9 ms a time (docs/performance.md), which was most of
 * the node's CPU per item. Anything else (text around it, a function, an index, `$("Node")`, `$fromAI`) is not
 * recognised here, and n8n evaluates it.
 */

const IDENTIFIER = '[A-Za-z_$][\\w$]*';
const SEGMENT = `\\.${IDENTIFIER}|\\[\\s*(?:"[^"\\\\]*"|'[^'\\\\]*')\\s*\\]`;
const REFERENCE = new RegExp(`^=\\{\\{\\s*\\$json((?:${SEGMENT})+)\\s*\\}\\}$`);
const SEGMENTS = new RegExp(SEGMENT, 'g');

/** Names that are not an item's data even when an item has them (n8n refuses or guards them in expressions). */
const GUARDED = new Set(['constructor', '__proto__', 'prototype']);

/** The field names a parameter's raw value refers to (`={{ $json.a.b }}` → ['a', 'b']); undefined otherwise. */
export function jsonPathOf(raw: unknown): string[] | undefined {
	if (typeof raw !== 'string') return undefined;
	const match = REFERENCE.exec(raw);
	if (!match) return undefined;
	const path = (match[1].match(SEGMENTS) ?? []).map((segment) =>
		segment.startsWith('.') ? segment.slice(1) : segment.replace(/^\[\s*["']|["']\s*\]$/g, ''),
	);
	return path.some((name) => GUARDED.has(name)) ? undefined : path;
}

/**
 * The text, number or boolean at `path` in an item's data; undefined for anything else (absent, null, an object or
 * a list), which the caller leaves to n8n so that its answer, or its error, stays n8n's own.
 */
export function primitiveAt(json: unknown, path: string[]): string | number | boolean | undefined {
	let value: unknown = json;
	for (const name of path) {
		if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
		if (!Object.prototype.hasOwnProperty.call(value, name)) return undefined;
		value = (value as Record<string, unknown>)[name];
	}
	return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
		? value
		: undefined;
}
