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
