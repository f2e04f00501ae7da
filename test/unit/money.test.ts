import {
	MONEY_LIMIT,
	fromCents,
	readCents,
	sumCents,
} from '../../nodes/InvoiceService/helpers/money';

describe('readCents: money in integer cents', () => {
	it.each([
		[0.1, 10],
		[0.2, 20],
		[19.99, 1999],
		[100, 10000],
		['12.5', 1250],
		[' 7.05 ', 705],
		['.5', 50],
		['12.', 1200],
		['+3', 300],
		[-3.25, -325],
		[0, 0],
		// Floating-point results of expressions: within rounding error of whole cents.
		[4.35 * 3, 1305], // 13.049999999999999
		[0.1 + 0.2, 30], // 0.30000000000000004
		[1.1 * 3, 330], // 3.3000000000000003
		[1.15 * 100, 11500], // 114.99999999999999
		[0.07 * 100, 700], // 7.000000000000001
		[0.3 - 0.1 - 0.2, 0], // -2.7755575615628914e-17
		['13.049999999999999', 1305], // the same number after an expression wrote it as text
		['0.30000000000000004', 30],
		// Exponent notation, as JavaScript and JSON write some numbers.
		['1e2', 10000],
		['1.5E3', 150000],
		['1234e-2', 1234],
		[9_999_999_999.99, 999_999_999_999],
		[-9_999_999_999.99, -999_999_999_999],
	])('readCents(%p) = %p cents', (input, cents) => {
		expect(readCents(input)).toEqual({ cents });
	});

	it('a sum of 1,000 prices of 0.10 computed in floating point is 100.00', () => {
		let total = 0;
		for (let line = 0; line < 1000; line++) total += 0.1;
		expect(total).not.toBe(100); // 99.9999999999986
		expect(readCents(total)).toEqual({ cents: 10000 });
	});

	it('never gives negative zero', () => {
		for (const input of [-0, '-0', '-0.00', -1e-17]) {
			const reading = readCents(input) as { cents: number };
			expect(Object.is(reading.cents, 0)).toBe(true);
		}
	});

	it.each([
		[1.234, 'fraction of a cent'],
		['1.234', 'fraction of a cent'],
		[12.345, 'fraction of a cent'],
		[12.001, 'fraction of a cent'],
		[0.001, 'fraction of a cent'],
		[1.005, 'fraction of a cent'], // 1.00499999999999989...: half a cent off, not rounding error
		[12.0001, 'fraction of a cent'],
		[1e-7, 'fraction of a cent'],
		[1_234_567.891, 'fraction of a cent'],
		[9_999_999_999.991, 'fraction of a cent'],
		['1e-3', 'fraction of a cent'],
		[NaN, 'not finite'],
		[Infinity, 'not finite'],
		[-Infinity, 'not finite'],
		[1e21, 'too large'],
		['1e21', 'too large'],
		[MONEY_LIMIT, 'too large'],
		[-MONEY_LIMIT, 'too large'],
		['12,50', 'decimal comma'],
		['1,234.50', 'decimal comma'],
		['1.234,50', 'decimal comma'],
		['€12', 'currency sign'],
		['12 EUR', 'currency sign'],
		['$5.00', 'currency sign'],
		['£3', 'currency sign'],
		['usd 4', 'currency sign'],
		['abc', 'not a number'],
		['NaN', 'not a number'],
		['Infinity', 'not a number'],
		['0x10', 'not a number'],
		['1 000', 'not a number'],
		['\u221212', 'not a number'], // a typographic minus sign
		['12.5.1', 'not a number'],
		[true, 'not a number'],
		[[12], 'not a number'],
		[{ amount: 12 }, 'not a number'],
		['', 'blank'],
		['   ', 'blank'],
		[null, 'blank'],
		[undefined, 'blank'],
	])('readCents(%p) is refused: %s', (input, problem) => {
		expect(readCents(input)).toEqual({ problem });
	});

	it('sums exactly: 0.1 + 0.2 is 0.30', () => {
		const cents = (value: number) => (readCents(value) as { cents: number }).cents;
		const total = sumCents([cents(0.1), cents(0.2)]);
		expect(total).toBe(30);
		expect(fromCents(total)).toBe(0.3);
	});

	it('fromCents gives at most two decimals', () => {
		expect(fromCents(1030)).toBe(10.3);
		expect(fromCents(100030)).toBe(1000.3);
		expect(String(fromCents(123456789))).toBe('1234567.89');
		expect(String(fromCents(999_999_999_999))).toBe('9999999999.99');
	});
});
