import { isBlank } from './blank';

/**
 * Money is handled in integer cents so that sums are exact (0.1 + 0.2 is 0.30, not 0.30000000000000004),
 * and converted back to a number with at most two decimals only when a request body is built.
 */

/**
 * How far a number may be from a whole number of cents and still count as it, relative to its size (at least
 * 1.00). A binary double is exact to about 1 part in 9×10^15 (2^-53) per arithmetic step, so a price computed
 * in an expression is off by a few parts in 10^16 (4.35 × 3 = 13.049999999999999), and summing 1,000 prices of
 * 0.10 by 1.4 parts in 10^14: this allows several hundred roundings. A real third decimal (0.001, a tenth of a
 * cent) stays at least twice the tolerance at every size below MONEY_LIMIT (where the tolerance is 0.0005), so
 * 12.345 or 12.001 are still refused.
 */
export const RELATIVE_TOLERANCE = 5e-14;

/** Prices and amounts must be smaller than this in size: the tolerance above keeps its meaning below it. */
export const MONEY_LIMIT = 10_000_000_000;

export type MoneyProblem =
	| 'blank'
	| 'not a number'
	| 'decimal comma'
	| 'currency sign'
	| 'not finite'
	| 'too large'
	| 'fraction of a cent';

export type MoneyReading = { cents: number } | { problem: MoneyProblem };

// Plain decimal notation, optionally in exponent form ("1e2" is how JavaScript writes some numbers, JSON allows it).
const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i;

/** Whether trimmed text is a number in decimal notation (what the money rule and number options read). */
export function isDecimalText(text: string): boolean {
	return DECIMAL.test(text);
}
// "12,50", "1,234.50", "1.234,50": a comma next to digits is a decimal comma or a thousands separator.
const COMMA_IN_NUMBER = /^[-+]?[\d.]*\d,\d[\d.,]*$/;
// "€12", "12 EUR", "$ 5", "GBP 3.50" and other currency symbols (Unicode category Sc).
const CURRENCY_SIGN = /\p{Sc}|\b(?:EUR|USD|GBP)\b/iu;

/**
 * Reads a price or amount into integer cents: a finite number, or text holding one in decimal notation, that is
 * within RELATIVE_TOLERANCE of a whole number of cents. Never throws: the caller turns a problem into a message.
 */
export function readCents(value: unknown): MoneyReading {
	if (typeof value === 'number') return centsOfNumber(value);
	if (isBlank(value)) return { problem: 'blank' };
	if (typeof value !== 'string') return { problem: 'not a number' };
	const text = value.trim(); // trim() also drops no-break spaces and a byte-order mark
	if (isDecimalText(text)) return centsOfNumber(Number(text));
	if (COMMA_IN_NUMBER.test(text)) return { problem: 'decimal comma' };
	if (CURRENCY_SIGN.test(text)) return { problem: 'currency sign' };
	return { problem: 'not a number' };
}

function centsOfNumber(value: number): MoneyReading {
	if (!Number.isFinite(value)) return { problem: 'not finite' };
	if (Math.abs(value) >= MONEY_LIMIT) return { problem: 'too large' };
	const scaled = value * 100;
	const cents = Math.round(scaled);
	const tolerance = Math.max(Math.abs(scaled), 100) * RELATIVE_TOLERANCE;
	if (Math.abs(scaled - cents) > tolerance) return { problem: 'fraction of a cent' };
	return { cents: cents === 0 ? 0 : cents }; // 0, never -0
}

/** Converts integer cents back to a number with at most two decimals (1030 → 10.3). */
export function fromCents(cents: number): number {
	return Number((cents / 100).toFixed(2));
}

/** Sums integer cents. */
export function sumCents(values: number[]): number {
	return values.reduce((total, value) => total + value, 0);
}
