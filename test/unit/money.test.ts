import { fromCents, sumCents, toCents } from '../../nodes/InvoiceService/helpers/money';

describe('money in integer cents', () => {
	it.each([
		[0.1, 10],
		[0.2, 20],
		[19.99, 1999],
		[100, 10000],
		['12.5', 1250],
		[' 7.05 ', 705],
		['.5', 50],
		[-3.25, -325],
		[0, 0],
	])('toCents(%p) = %p', (input, cents) => {
		expect(toCents(input)).toBe(cents);
	});

	it.each([
		[1.234],
		['1.234'],
		[NaN],
		[Infinity],
		['abc'],
		[''],
		[null],
		[undefined],
		[{}],
		['1e3'],
		[1e21],
	])('toCents(%p) is null (not a finite number with at most 2 decimals)', (input) => {
		expect(toCents(input)).toBeNull();
	});

	it('sums exactly: 0.1 + 0.2 is 0.30', () => {
		const total = sumCents([toCents(0.1)!, toCents(0.2)!]);
		expect(total).toBe(30);
		expect(fromCents(total)).toBe(0.3);
	});

	it('sums many small prices without drift', () => {
		const total = sumCents(Array.from({ length: 1000 }, () => toCents(0.01)!));
		expect(fromCents(total)).toBe(10);
	});

	it('fromCents gives at most two decimals', () => {
		expect(fromCents(1030)).toBe(10.3);
		expect(fromCents(100030)).toBe(1000.3);
		expect(String(fromCents(123456789))).toBe('1234567.89');
	});
});
