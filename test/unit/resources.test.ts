// The resource table (actions/resources.ts) is the one list of operations. Everything an operation needs beyond
// its own code must be there for each of them: a failure here names the operation and what it lacks.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties } from 'n8n-workflow';

import {
	allOperations,
	findOperation,
	outputSchemaFile,
	resourceOptions,
	resources,
} from '../../nodes/InvoiceService/actions/resources';
import { TOOL_DESCRIPTIONS } from '../../nodes/InvoiceService/actions/tool';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { NODE_DIR, readOutputSchema } from '../support/output-schema';

const { properties } = new InvoiceService().description;
const operations = allOperations().map(
	(entry) => [`${entry.resource} → ${entry.name}`, entry] as const,
);

test('the Resource selector offers exactly the resources of the table, in its order', () => {
	const selector = properties.find((property) => property.name === 'resource');
	expect(selector?.options).toEqual(resourceOptions);
	expect(resourceOptions.map(({ value }) => value)).toEqual(Object.keys(resources));
});

test('the table has operations, and unknown names find none', () => {
	expect(operations.length).toBeGreaterThan(0);
	expect(findOperation('customer', 'constructor')).toBeUndefined();
	expect(findOperation('toString', 'create')).toBeUndefined();
});

describe.each(operations)('%s', (_, { resource, name, operation }) => {
	const shown = (property: INodeProperties) =>
		property.displayOptions?.show?.resource?.includes(resource) &&
		property.displayOptions?.show?.operation?.includes(name);
	const fieldNames = operation.description.filter(shown).map((field) => field.name);

	test('is offered in its resource’s Operation selector, with an action', () => {
		const selector = resources[resource].description.find((p) => p.name === 'operation');
		expect(selector?.options).toContainEqual(expect.objectContaining({ value: name }));
		expect(operation.option.action).not.toBe('');
	});

	test('has an output schema file where n8n looks for it, naming every answer field the tool gives', () => {
		const file = path.join(NODE_DIR, outputSchemaFile(resource, name));
		expect(fs.existsSync(file)).toBe(true);
		const schema = readOutputSchema(1, resource, name);
		expect(schema.type).toBe('object');
		for (const field of operation.tool.answerFields)
			expect(Object.keys(schema.properties)).toContain(field);
	});

	test('has a tool description the tool variant shows, and tool defaults for its own fields only', () => {
		expect(operation.tool.description.length).toBeGreaterThan(0);
		expect(TOOL_DESCRIPTIONS[resource][name]).toBe(operation.tool.description);
		const descriptionField = properties.find(
			(p) => p.name === 'toolDescription' && shown(p) && p.displayOptions?.show?.['@tool'],
		);
		expect(descriptionField?.default).toBe(operation.tool.description);
		expect(Object.keys(operation.tool.defaults).length).toBeGreaterThan(0);
		for (const field of Object.keys(operation.tool.defaults)) expect(fieldNames).toContain(field);
		expect(operation.tool.answerFields.length).toBeGreaterThan(0);
	});
});

test('every output schema file belongs to an operation of the table', () => {
	const dir = path.join(NODE_DIR, '__schema__', 'v1.0.0');
	const files = fs
		.readdirSync(dir)
		.flatMap((resource) => fs.readdirSync(path.join(dir, resource)).map((f) => `${resource}/${f}`));
	expect(files.sort()).toEqual(
		allOperations()
			.map(({ resource, name }) => `${resource}/${name}.json`)
			.sort(),
	);
});
