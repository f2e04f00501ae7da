// The three ways a user's Invoice Service Tool node can hold its fields, for the tests of what the model is
// shown: the tool variant's current defaults, fields switched to "defined automatically by the model" in n8n's
// editor (or saved by an earlier version), and fixed values.
import type { INodeParameters } from 'n8n-workflow';

/** What n8n's editor writes for "Let the model define this parameter": a `$fromAI()` with an empty description. */
export function emptyFromAI(key: string, type: 'string' | 'json' = 'string'): string {
	return `={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('${key}', '', '${type}') }}`;
}

export type ToolResource = 'customer' | 'invoice';

export interface ToolState {
	name: string;
	/** The node's parameters per resource, as saved in the workflow (resource and operation included). */
	parameters: Record<ToolResource, INodeParameters>;
}

/**
 * The three states. `fixed` needs an existing customer's id for its invoice; `email` makes the fixed customer's
 * e-mail unique where several runs share a service.
 */
export function toolStates(fixed: { customerId: string; email: string }): ToolState[] {
	const base = (resource: ToolResource) => ({ resource, operation: 'create' });
	return [
		{
			name: 'current defaults',
			parameters: { customer: base('customer'), invoice: base('invoice') },
		},
		{
			name: 'empty-description $fromAI placeholders',
			parameters: {
				customer: {
					...base('customer'),
					firstName: emptyFromAI('First_Name'),
					lastName: emptyFromAI('Last_Name'),
					email: emptyFromAI('Email'),
				},
				invoice: {
					...base('invoice'),
					customerId: emptyFromAI('Customer_ID'),
					currency: emptyFromAI('Currency'),
					lineItemsMode: 'json',
					lineItemsJson: emptyFromAI('Line_Items__JSON_', 'json'),
				},
			},
		},
		{
			name: 'fixed values',
			parameters: {
				customer: {
					...base('customer'),
					firstName: 'Fixed',
					lastName: 'Values',
					email: fixed.email,
				},
				invoice: {
					...base('invoice'),
					customerId: fixed.customerId,
					currency: 'USD',
					lineItemsMode: 'fields',
					lineItems: { item: [{ description: 'Fixed fee', price: 42.5 }] },
				},
			},
		},
	];
}

/**
 * The formats the model must be shown for each tool, whatever its fields hold: searched in the tool's
 * description and argument descriptions together.
 */
export const FORMATS_SHOWN: Record<ToolResource, RegExp[]> = {
	customer: [/name@example\.com/, /cust_123/],
	invoice: [
		/cust_123/,
		/\bEUR\b/,
		/\bUSD\b/,
		/\bGBP\b/,
		/\[\{"description": "Consulting", "price": 100\.5\}\]/,
		/excluding VAT with at most 2 decimals/,
	],
};
