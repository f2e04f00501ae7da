// Property-based tests of the money rule (helpers/money.ts): whole cents give back exactly those cents, whatever
// floating-point arithmetic did to them on the way; a real finer fraction is refused at every size.
import fc from 'fast-check';

import {
	MONEY_LIMIT,
	RELATIVE_TOLERANCE,
	fromCents,
	readCents,
} from '../../nodes/InvoiceService/helpers/money';

const LIMIT_CENTS = MONEY_LIMIT * 100 - 1;
/** Any amount the rule accepts, in cents, small ones and those near the limit alike. */
const anyCents = fc.oneof(
	fc.integer({ min: -100_000, max: 100_000 }),
	fc.integer({ min: -LIMIT_CENTS, max: LIMIT_CENTS }),
);

/** The double `steps` representable numbers away from `value` (steps of one unit in the last place). */
function ulpSteps(value: number, steps: number): number {
	if (value === 0) return steps * Number.MIN_VALUE;
	const view = new DataView(new ArrayBuffer(8));
	view.setFloat64(0, value);
	view.setBigInt64(0, view.getBigInt64(0) + BigInt(steps));
	return view.getFloat64(0);
}

/** Exact decimal text of cents, e.g. -1999 → "-19.99", without going through a double. */
function centsText(cents: number): string {
	const digits = String(Math.abs(cents)).padStart(3, '0');
	return `${cents < 0 ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

const accepted = (cents: number) => ({ cents: cents === 0 ? 0 : cents });

describe('money rule, for all amounts', () => {
	it('a typed amount (the double nearest a whole number of cents) is exactly those cents', () => {
		fc.assert(
			fc.property(anyCents, (cents) => {
				expect(readCents(cents / 100)).toEqual(accepted(cents));
				expect(readCents(centsText(cents))).toEqual(accepted(cents));
				expect(readCents(fromCents(cents))).toEqual(accepted(cents));
			}),
		);
	});

	it('a number a few rounding steps away from whole cents is still those cents', () => {
		fc.assert(
			fc.property(anyCents, fc.integer({ min: -64, max: 64 }), (cents, steps) => {
				const noisy = ulpSteps(cents / 100, steps);
				expect(readCents(noisy)).toEqual(accepted(cents));
				// ...and the same number written as text by an expression
				expect(readCents(String(noisy))).toEqual(accepted(cents));
			}),
		);
	});

	it('quantity × unit price computed in floating point is the exact product in cents', () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 1, max: 10_000 }),
				fc.integer({ min: -1_000_000, max: 1_000_000 }),
				(quantity, unitCents) => {
					expect(readCents(quantity * (unitCents / 100))).toEqual(accepted(quantity * unitCents));
				},
			),
		);
	});

	it('a sum of up to 200 prices computed in floating point is the exact sum in cents', () => {
		fc.assert(
			fc.property(
				fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 200 }),
				(prices) => {
					const floatSum = prices.reduce((total, cents) => total + cents / 100, 0);
					const exact = prices.reduce((total, cents) => total + cents, 0);
					expect(readCents(floatSum)).toEqual(accepted(exact));
				},
			),
		);
	});

	it('a real third decimal (0.001 to 0.009 beside whole cents) is refused at every size', () => {
		fc.assert(
			fc.property(anyCents, fc.integer({ min: 1, max: 9 }), (cents, thousandth) => {
				const milli = cents * 10 + (cents < 0 ? -thousandth : thousandth);
				const digits = String(Math.abs(milli)).padStart(4, '0');
				const text = `${milli < 0 ? '-' : ''}${digits.slice(0, -3)}.${digits.slice(-3)}`;
				expect(readCents(text)).toEqual({ problem: 'fraction of a cent' });
				expect(readCents(Number(text))).toEqual({ problem: 'fraction of a cent' });
			}),
		);
	});

	it('a fraction down to the sixth decimal (0.000001) is refused below one million', () => {
		fc.assert(
			fc.property(
				fc.integer({ min: -99_999_999, max: 99_999_999 }),
				fc.integer({ min: 1, max: 9_999 }),
				(cents, millionths) => {
					const value = cents / 100 + millionths / 1_000_000;
					fc.pre(Math.abs(value) < 1_000_000);
					expect(readCents(value)).toEqual({ problem: 'fraction of a cent' });
				},
			),
		);
	});

	it('whatever it accepts is a safe integer of cents within the tolerance of the value, never -0', () => {
		fc.assert(
			fc.property(fc.double({ min: -2 * MONEY_LIMIT, max: 2 * MONEY_LIMIT }), (value) => {
				const reading = readCents(value);
				if ('problem' in reading) return;
				expect(Number.isSafeInteger(reading.cents)).toBe(true);
				expect(Object.is(reading.cents, -0)).toBe(false);
				expect(Math.abs(reading.cents)).toBeLessThanOrEqual(LIMIT_CENTS);
				const scaled = value * 100;
				expect(Math.abs(scaled - reading.cents)).toBeLessThanOrEqual(
					Math.max(Math.abs(scaled), 100) * RELATIVE_TOLERANCE,
				);
			}),
		);
	});

	it('text and number agree: a decimal string reads like the number it denotes', () => {
		fc.assert(
			fc.property(fc.double({ min: -MONEY_LIMIT, max: MONEY_LIMIT, noNaN: true }), (value) => {
				expect(readCents(String(value))).toEqual(readCents(value));
				expect(readCents(` ${String(value)}\u00a0`)).toEqual(readCents(value));
			}),
		);
	});
});
