import type { IDataObject } from 'n8n-workflow';

import { toCents } from './money';

/**
 * A field that failed validation. Pure helpers throw it; the router turns it into a NodeOperationError that
 * names the field and the item, so the same checks serve every operation.
 */
export class FieldError extends Error {
	constructor(
		readonly field: string,
		readonly problem: string,
	) {
		super(`${field}: ${problem}`);
		this.name = 'FieldError';
	}
}

/** Shows a received value in an error message without flooding it. */
export function describeValue(value: unknown): string {
	if (value === undefined) return 'nothing';
	if (value === null) return 'null';
	const text =
		typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
	return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export function requireText(value: unknown, field: string): string {
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	if (typeof value !== 'string' || value.trim() === '') {
		throw new FieldError(field, `is required and must be text, got ${describeValue(value)}`);
	}
	return value.trim();
}

export function optionalText(value: unknown, field: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	return requireText(value, field);
}

// Deliberately permissive (the service decides what it accepts): one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function requireEmail(value: unknown, field: string): string {
	const text = requireText(value, field);
	if (!EMAIL.test(text)) {
		throw new FieldError(
			field,
			`must be an e-mail address like name@example.com, got ${describeValue(value)}`,
		);
	}
	return text;
}

const CUSTOMER_ID = /^cust_\d+$/;

export function requireCustomerId(value: unknown, field: string): string {
	const text = requireText(value, field);
	if (!CUSTOMER_ID.test(text)) {
		throw new FieldError(
			field,
			`must be a customer ID like cust_123 (the "id" returned by Create Customer), got ${describeValue(value)}`,
		);
	}
	return text;
}

export const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
export type Currency = (typeof CURRENCIES)[number];

export function requireCurrency(value: unknown, field: string): Currency {
	const text = typeof value === 'string' ? value.trim().toUpperCase() : value;
	if (!CURRENCIES.includes(text as Currency)) {
		throw new FieldError(
			field,
			`must be one of ${CURRENCIES.join(', ')}, got ${describeValue(value)}`,
		);
	}
	return text as Currency;
}

/** A price: a finite number (or numeric text) with at most two decimals, returned in cents. */
export function requirePriceCents(value: unknown, field: string): number {
	const cents = value === '' || value === null ? null : toCents(value);
	if (cents === null) {
		throw new FieldError(
			field,
			`must be a number with at most 2 decimals, like 19.99, got ${describeValue(value)}`,
		);
	}
	return cents;
}

export function requirePositiveAmountCents(value: unknown, field: string): number {
	const cents = requirePriceCents(value, field);
	if (cents <= 0)
		throw new FieldError(field, `must be greater than 0, got ${describeValue(value)}`);
	return cents;
}

export interface LineItem {
	description: string;
	priceCents: number;
	/** Further line fields the user passed in JSON mode; the spec says they exist but does not name them. */
	extra: IDataObject;
}

/**
 * Validates invoice lines given either as the UI's rows or as JSON (an array, or a JSON string of one).
 * `field` is the parameter the lines came from, so errors point the user at it.
 */
export function parseLineItems(value: unknown, field: string): LineItem[] {
	let lines = value;
	if (typeof lines === 'string') {
		let parseProblem: string | undefined;
		try {
			lines = lines.trim() === '' ? [] : JSON.parse(lines);
		} catch (error) {
			parseProblem = (error as Error).message;
		}
		if (parseProblem !== undefined)
			throw new FieldError(field, `is not valid JSON (${parseProblem})`);
	}
	if (lines === undefined || lines === null) lines = [];
	if (!Array.isArray(lines)) {
		throw new FieldError(
			field,
			`must be an array of lines like [{"description": "Consulting", "price": 100}], got ${describeValue(lines)}`,
		);
	}
	if (lines.length === 0) {
		throw new FieldError(field, 'must contain at least one line item');
	}
	return lines.map((line: unknown, index) => {
		const where = `${field}, line ${index + 1}`;
		if (typeof line !== 'object' || line === null || Array.isArray(line)) {
			throw new FieldError(
				where,
				`must be an object with "description" and "price", got ${describeValue(line)}`,
			);
		}
		const { description, price, ...extra } = line as IDataObject;
		return {
			description: requireText(description, `${where}: Description`),
			priceCents: requirePriceCents(price, `${where}: Price`),
			extra,
		};
	});
}
