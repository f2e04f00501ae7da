import type { NodeParameterValueType } from 'n8n-workflow';

import type { OperationTool } from './operation';

/**
 * The AI tool's arguments: the `$fromAI()` expression and what the model is told about each argument. Each
 * operation names its own (`tool` in its operation file); actions/tool.ts builds the tool variant from them.
 */

/** The comment n8n's editor puts in the `$fromAI()` it writes; with it the editor shows the "✨ model" pill. */
const FROM_AI_MARKER = '/*n8n-auto-generated-fromAI-override*/';

/** The expression n8n's editor writes for "Let the model define this parameter", with a description. */
export function fromAI(key: string, description: string, type: 'string' | 'json'): string {
	return `={{ ${FROM_AI_MARKER} $fromAI('${key}', \`${description}\`, '${type}') }}`;
}

/** What the model is told about each argument (the descriptions in the tool's input schema). */
export const TOOL_ARGUMENTS = {
	firstName: "The customer's first name",
	lastName: "The customer's last name",
	email:
		"The customer's business e-mail address, like name@example.com; it must not belong to an existing customer",
	customerId:
		'The ID of the customer to invoice, like cust_123: the id returned when the customer was created',
	currency: 'The currency of the invoice, one of EUR, USD, GBP',
	lineItems:
		'The invoice lines, a JSON array like [{"description": "Consulting", "price": 100.5}]: "description" is text, "price" a number excluding VAT with at most 2 decimals (negative for a discount). The invoice amount, excluding VAT, is the sum of the prices and must be greater than 0',
} as const;

type Argument = keyof typeof TOOL_ARGUMENTS;
/** The arguments a model hands over as JSON rather than text. */
const JSON_ARGUMENTS: ReadonlySet<Argument> = new Set<Argument>(['lineItems']);

/**
 * An operation as an AI tool: what it does, the arguments the model fills (each with its label in the
 * description and the field it fills, by default the field of the argument's name), what it answers, the answer
 * fields the model gets back, and fields the tool variant sets to a fixed value.
 */
export function operationTool(spec: {
	does: string;
	asks: Array<[argument: Argument, label: string, field?: string]>;
	answers: string;
	answerFields: string[];
	fixed?: Record<string, NodeParameterValueType>;
}): OperationTool {
	const lines = spec.asks.map(([key, label]) => `- ${label}: ${TOOL_ARGUMENTS[key]}`);
	const defaults: Record<string, NodeParameterValueType> = { ...spec.fixed };
	for (const [key, , field = key] of spec.asks)
		defaults[field] = fromAI(key, TOOL_ARGUMENTS[key], JSON_ARGUMENTS.has(key) ? 'json' : 'string');
	return {
		description: [spec.does, ...lines, spec.answers].join('\n'),
		defaults,
		answerFields: spec.answerFields,
	};
}
