/**
 * The one table of what the node offers: each resource with its operations. The Resource and Operation
 * selectors, the router, the AI tool variant (each operation's `tool`) and the output schema files are all read
 * from it, so an operation added to a resource's `operations` gets every one of them, and
 * test/unit/resources.test.ts fails while one is missing.
 */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import * as customer from './customer';
import * as invoice from './invoice';
import type { Operation } from './operation';

export interface Resource {
	/** How the Resource selector shows it; its value there is its key in `resources`. */
	name: string;
	/** What the router runs, by the operation's value in the Operation selector. */
	operations: Record<string, Operation>;
	/** The Operation selector and the fields of every operation (built from `operations`). */
	description: INodeProperties[];
}

export const resources: Record<string, Resource> = {
	customer: { name: 'Customer', ...customer },
	invoice: { name: 'Invoice', ...invoice },
};

/** The Resource selector's options, in the table's order. */
export const resourceOptions: INodePropertyOptions[] = Object.entries(resources).map(
	([value, { name }]) => ({ name, value }),
);

/** Every operation with its resource and name, in the table's order. */
export function allOperations(): Array<{ resource: string; name: string; operation: Operation }> {
	return Object.entries(resources).flatMap(([resource, { operations }]) =>
		Object.entries(operations).map(([name, operation]) => ({ resource, name, operation })),
	);
}

/** The operation chosen in the node, or undefined (own keys only: "constructor" is not an operation). */
export function findOperation(resource: string, operation: string): Operation | undefined {
	const operations = Object.hasOwn(resources, resource) ? resources[resource].operations : {};
	return Object.hasOwn(operations, operation) ? operations[operation] : undefined;
}

/**
 * The output schema file of an operation, relative to the node's folder: n8n's output-schema resolver reads
 * `__schema__/v<node version as x.y.z>/<resource>/<operation>.json` (n8n-core nodes-loader).
 */
export function outputSchemaFile(resource: string, operation: string, nodeVersion = 1): string {
	return `__schema__/v${nodeVersion}.0.0/${resource}/${operation}.json`;
}
