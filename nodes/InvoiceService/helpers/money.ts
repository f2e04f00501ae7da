/**
 * Money is handled in integer cents so that sums are exact (0.1 + 0.2 is 0.30, not 0.30000000000000004),
 * and converted back to a number with at most two decimals only when a request body is built.
 */

/** Parses a price or amount into integer cents; `null` when it is not a finite number with at most 2 decimals. */
export function toCents(value: unknown): number | null {
	let text: string;
	if (typeof value === 'number') {
		if (!Number.isFinite(value)) return null;
		// A JS number like 19.99 prints as "19.99"; 1e21 prints in exponent form and is rejected below.
		text = String(value);
	} else if (typeof value === 'string') {
		text = value.trim();
	} else {
		return null;
	}
	const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text) ?? /^(-?)()\.(\d{1,2})$/.exec(text);
	if (!match) return null;
	const [, sign, whole, fraction = ''] = match;
	const cents = Number(whole || '0') * 100 + Number(fraction.padEnd(2, '0'));
	if (!Number.isSafeInteger(cents)) return null;
	return sign === '-' ? -cents : cents;
}

/** Converts integer cents back to a number with at most two decimals (1030 → 10.3). */
export function fromCents(cents: number): number {
	return Number((cents / 100).toFixed(2));
}

/** Sums integer cents. */
export function sumCents(values: number[]): number {
	return values.reduce((total, value) => total + value, 0);
}
