// The output schemas the node ships (nodes/InvoiceService/__schema__/v<version>/<resource>/<operation>.json,
// where n8n's editor and AI workflow builder look for them), and a strict check of an output item against one:
// the small part of JSON Schema they use (object, string properties, pattern, required).
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { outputSchemaFile } from '../../nodes/InvoiceService/actions/resources';

export interface OutputSchema {
	type: 'object';
	properties: Record<
		string,
		{ type: string; pattern?: string; format?: string; description?: string }
	>;
	required?: string[];
}

export const NODE_DIR = path.join(__dirname, '..', '..', 'nodes', 'InvoiceService');

/** The schema of an operation for a node version (e.g. 1 → v1.0.0), as n8n would read it. */
export function readOutputSchema(
	version: number,
	resource: string,
	operation: string,
): OutputSchema {
	const file = path.join(NODE_DIR, outputSchemaFile(resource, operation, version));
	return JSON.parse(fs.readFileSync(file, 'utf8')) as OutputSchema;
}

/**
 * What is wrong with `json` against `schema`, as sentences (none = it matches): a field of the output the schema
 * does not name, a field the schema names that the output lacks, a type or pattern that does not hold.
 */
export function schemaMismatches(schema: OutputSchema, json: IDataObject): string[] {
	const problems: string[] = [];
	const named = Object.keys(schema.properties);
	for (const key of Object.keys(json)) {
		if (!named.includes(key))
			problems.push(`the output has "${key}", which the schema does not name`);
	}
	for (const [key, property] of Object.entries(schema.properties)) {
		if (!(key in json)) {
			problems.push(`the schema names "${key}", which the output lacks`);
			continue;
		}
		const value = json[key];
		if (typeof value !== property.type) {
			problems.push(`"${key}" is ${typeof value}, the schema says ${property.type}`);
		} else if (property.pattern && !new RegExp(property.pattern).test(String(value))) {
			problems.push(`"${key}" (${String(value)}) does not match ${property.pattern}`);
		}
	}
	for (const key of schema.required ?? []) {
		if (!named.includes(key)) problems.push(`"${key}" is required but not described`);
	}
	return problems;
}
