import {
	FieldError,
	parseLineItems,
	requireCurrency,
	requireCustomerId,
	requireEmail,
	requirePositiveAmountCents,
	requirePriceCents,
	requireText,
} from '../../nodes/InvoiceService/helpers/validate';

function problemOf(fn: () => unknown): FieldError {
	try {
		fn();
	} catch (error) {
		expect(error).toBeInstanceOf(FieldError);
		return error as FieldError;
	}
	throw new Error('expected a FieldError');
}

describe('field validation', () => {
	it('requires non-empty text and trims it', () => {
		expect(requireText('  Ada ', 'First Name')).toBe('Ada');
		const error = problemOf(() => requireText('   ', 'First Name'));
		expect(error.field).toBe('First Name');
		expect(error.problem).toBe('is required and must be text, got "   "');
		expect(problemOf(() => requireText(undefined, 'Last Name')).problem).toMatch(/got nothing/);
	});

	it('checks e-mail addresses', () => {
		expect(requireEmail('ada@example.com', 'Email')).toBe('ada@example.com');
		for (const bad of ['ada', 'ada@example', 'a da@example.com', '@example.com']) {
			expect(problemOf(() => requireEmail(bad, 'Email')).problem).toMatch(
				/must be an e-mail address/,
			);
		}
	});

	it('checks customer ids are cust_<number>', () => {
		expect(requireCustomerId(' cust_42 ', 'Customer ID')).toBe('cust_42');
		for (const bad of ['42', 'cust_', 'cust_4a', 'inv_1', 'CUST_1']) {
			expect(problemOf(() => requireCustomerId(bad, 'Customer ID')).problem).toMatch(
				/like cust_123/,
			);
		}
	});

	it('checks currencies', () => {
		expect(requireCurrency('eur', 'Currency')).toBe('EUR');
		expect(problemOf(() => requireCurrency('CHF', 'Currency')).problem).toBe(
			'must be one of EUR, USD, GBP, got "CHF"',
		);
	});

	it('checks prices and amounts', () => {
		expect(requirePriceCents('19.99', 'Price')).toBe(1999);
		expect(problemOf(() => requirePriceCents(1.005, 'Price')).problem).toMatch(
			/at most 2 decimals/,
		);
		expect(problemOf(() => requirePriceCents('', 'Price')).problem).toMatch(/at most 2 decimals/);
		expect(problemOf(() => requirePositiveAmountCents(0, 'Custom Amount')).problem).toBe(
			'must be greater than 0, got 0',
		);
		expect(problemOf(() => requirePositiveAmountCents(-5, 'Custom Amount')).problem).toMatch(
			/greater than 0/,
		);
	});
});

describe('parseLineItems', () => {
	it('accepts an array and keeps extra line fields', () => {
		const lines = parseLineItems(
			[{ description: 'A', price: 1.5, quantity: 2, sku: 'X' }],
			'Line Items (JSON)',
		);
		expect(lines).toEqual([
			{ description: 'A', priceCents: 150, extra: { quantity: 2, sku: 'X' } },
		]);
	});

	it('accepts a JSON string of an array', () => {
		expect(
			parseLineItems('[{"description":"B","price":"2.25"}]', 'Line Items (JSON)')[0].priceCents,
		).toBe(225);
	});

	it('names the line and the field of a bad line', () => {
		const error = problemOf(() =>
			parseLineItems([{ description: 'ok', price: 1 }, { price: 2 }], 'Line Items'),
		);
		expect(error.field).toBe('Line Items, line 2: Description');
		const price = problemOf(() =>
			parseLineItems([{ description: 'x', price: 'ten' }], 'Line Items'),
		);
		expect(price.field).toBe('Line Items, line 1: Price');
	});

	it('refuses no lines, non-arrays and broken JSON', () => {
		expect(problemOf(() => parseLineItems([], 'Line Items')).problem).toBe(
			'must contain at least one line item',
		);
		expect(problemOf(() => parseLineItems('', 'Line Items (JSON)')).problem).toBe(
			'must contain at least one line item',
		);
		expect(
			problemOf(() => parseLineItems({ description: 'x' }, 'Line Items (JSON)')).problem,
		).toMatch(/must be an array/);
		expect(problemOf(() => parseLineItems('[{', 'Line Items (JSON)')).problem).toMatch(
			/is not valid JSON/,
		);
		expect(problemOf(() => parseLineItems(['x'], 'Line Items (JSON)')).field).toBe(
			'Line Items (JSON), line 1',
		);
	});
});
