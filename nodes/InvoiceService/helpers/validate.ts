import type { IDataObject } from 'n8n-workflow';

import { isBlank } from './blank';
import { clip } from './clip';
import { fromCents, isDecimalText, MONEY_LIMIT, readCents, type MoneyProblem } from './money';

/**
 * A field that failed validation. Pure helpers throw it; the router turns it into a NodeOperationError that
 * adds the item ("Item 2: " + this message), so the same checks serve every operation.
 */
export class FieldError extends Error {
	/** What the user can do, beyond fixing the field (added to the error's description). */
	readonly next?: string;

	constructor(
		readonly field: string,
		readonly problem: string,
		{ next }: { next?: string } = {},
	) {
		super(`${field} ${problem}`);
		this.next = next;
		this.name = 'FieldError';
	}
}

/** Shows a received value in an error message without flooding it. */
export function describeValue(value: unknown): string {
	if (value === undefined) return 'nothing';
	if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value); // NaN, Infinity
	let text: string;
	try {
		text = JSON.stringify(value) ?? String(value);
	} catch {
		text = String(value); // a bigint, or an object that refers to itself
	}
	return clip(text, 80);
}

/**
 * An optional text field: the text as given, trimmed; blank means "not given" (`undefined`, so it is not sent).
 * A finite number is written as text (2024 → "2024"); anything else (true, an array, an object) is refused.
 */
export function optionalText(value: unknown, field: string): string | undefined {
	if (isBlank(value)) return undefined;
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	if (typeof value !== 'string')
		throw new FieldError(field, `must be text, got ${describeValue(value)}`);
	return value.trim();
}

export function requireText(value: unknown, field: string): string {
	const text = optionalText(value, field);
	if (text === undefined) {
		throw new FieldError(field, `is required and must be text, got ${describeValue(value)}`);
	}
	return text;
}

/** An optional switch: a boolean, or the text "true"/"false" (forms send text); blank means "not given". */
export function optionalBoolean(value: unknown, field: string): boolean | undefined {
	if (typeof value === 'boolean') return value;
	if (isBlank(value)) return undefined;
	const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
	if (text === 'true' || text === 'false') return text === 'true';
	throw new FieldError(field, `must be true or false, got ${describeValue(value)}`);
}

/**
 * An optional number setting: a number, or text holding one; blank means "not given" (`undefined`, so the default
 * applies). Outside the range the editor allows, it is refused rather than silently clamped.
 */
export function optionalNumber(
	value: unknown,
	field: string,
	range: { min: number; max?: number; whole?: boolean },
): number | undefined {
	if (isBlank(value)) return undefined;
	const number =
		typeof value === 'number'
			? value
			: typeof value === 'string' && isDecimalText(value.trim())
				? Number(value)
				: NaN;
	const { min, max, whole = false } = range;
	if (
		!Number.isFinite(number) ||
		number < min ||
		(max !== undefined && number > max) ||
		(whole && !Number.isInteger(number))
	) {
		const limits = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
		throw new FieldError(
			field,
			`must be ${whole ? 'a whole number' : 'a number'} ${limits}, got ${describeValue(value)}`,
		);
	}
	return number;
}

/**
 * One of a selector's values, for parameters an expression may set: case and surrounding spaces are ignored,
 * anything else is refused rather than guessed. `labels` are the names the editor shows, for the message.
 */
export function requireChoice<T extends string>(
	value: unknown,
	field: string,
	choices: readonly T[],
	labels: Partial<Record<T, string>> = {},
): T {
	const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
	const choice = choices.find((option) => option.toLowerCase() === text);
	if (choice === undefined) {
		const list = choices
			.map((option) => (labels[option] ? `${option} (${labels[option]})` : option))
			.join(', ');
		throw new FieldError(field, `must be one of ${list}, got ${describeValue(value)}`);
	}
	return choice;
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
	return requireChoice(value, field, CURRENCIES);
}

/** What each money problem means to the user; the default for the rest is "a number with at most 2 decimals". */
const MONEY_MESSAGES: Partial<Record<MoneyProblem, string>> = {
	'decimal comma': 'must use a dot for decimals and no thousands separators, like 1234.50',
	'currency sign':
		'must be a plain number like 12.50, without a currency sign or code (the Currency field sets it)',
	'not finite': 'must be a finite number with at most 2 decimals, like 19.99',
	'too large': `must be between -${fromCents(MONEY_LIMIT * 100 - 1)} and ${fromCents(MONEY_LIMIT * 100 - 1)}`,
};

/**
 * A price: a number (or numeric text) that is a whole number of cents, give or take floating-point rounding
 * (see readCents), returned in cents.
 */
export function requirePriceCents(value: unknown, field: string): number {
	const reading = readCents(value);
	if ('problem' in reading) {
		const expected =
			MONEY_MESSAGES[reading.problem] ?? 'must be a number with at most 2 decimals, like 19.99';
		throw new FieldError(field, `${expected}, got ${describeValue(value)}`);
	}
	return reading.cents;
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
			// trim() also drops a byte-order mark, which JSON.parse would refuse although the meaning is certain
			const text = lines.trim();
			lines = text === '' ? [] : JSON.parse(text);
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
		const key = unsafeKey(line);
		if (key !== undefined) {
			throw new FieldError(
				where,
				`must not contain the key "${key}" (it can change how objects behave in the service that reads it)`,
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

// Keys that rebuild an object's prototype when a receiver merges the line naively (prototype pollution).
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first unsafe key anywhere in a JSON value (JSON.parse keeps "__proto__" as an ordinary own key). */
function unsafeKey(value: unknown): string | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	for (const [key, inner] of Object.entries(value)) {
		const found = UNSAFE_KEYS.has(key) ? key : unsafeKey(inner);
		if (found !== undefined) return found;
	}
	return undefined;
}
