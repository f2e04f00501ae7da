import {
	FieldError,
	describeValue,
	optionalBoolean,
	optionalNumber,
	optionalText,
	parseLineItems,
	requireChoice,
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
		expect(requireText(2024, 'Description')).toBe('2024');
	});

	it('refuses what is not text, without calling it "required"', () => {
		for (const [value, shown] of [
			[true, 'true'],
			[['Ada'], '["Ada"]'],
			[{ name: 'Ada' }, '{"name":"Ada"}'],
			[NaN, 'NaN'],
		] as Array<[unknown, string]>) {
			expect(problemOf(() => requireText(value, 'First Name')).problem).toBe(
				`must be text, got ${shown}`,
			);
			expect(problemOf(() => optionalText(value, 'Company Name')).problem).toBe(
				`must be text, got ${shown}`,
			);
		}
	});

	it('optional text: nothing, null, empty and whitespace-only mean "not given"', () => {
		for (const blank of [
			undefined,
			null,
			'',
			'   ',
			'\t\n',
			'\u00a0\u2003',
			'\ufeff',
			'\u200b\u200d',
		]) {
			expect(optionalText(blank, 'Company Name')).toBeUndefined();
		}
		expect(optionalText('  Acme  ', 'Company Name')).toBe('Acme');
	});

	it('optional switches: booleans, "true"/"false" text, blank means not given', () => {
		expect(optionalBoolean(true, 'Send Email')).toBe(true);
		expect(optionalBoolean(' FALSE ', 'Send Email')).toBe(false);
		for (const blank of [undefined, null, '', '  ', '\u200b']) {
			expect(optionalBoolean(blank, 'Send Email')).toBeUndefined();
		}
		for (const bad of ['yes', 1, [true], {}]) {
			const error = problemOf(() => optionalBoolean(bad, 'Send Email'));
			expect(error.problem).toMatch(/^must be true or false, got /);
			expect(error.problem).not.toMatch(/required/);
		}
	});

	it('optional number settings: blank is not given, text is read, out of range is refused', () => {
		const range = { min: 1, max: 50, whole: true };
		for (const blank of [undefined, null, '', '  ']) {
			expect(optionalNumber(blank, 'Concurrency', range)).toBeUndefined();
		}
		expect(optionalNumber(' 7 ', 'Concurrency', range)).toBe(7);
		expect(optionalNumber(50, 'Concurrency', range)).toBe(50);
		for (const [bad, shown] of [
			[0, '0'],
			[51, '51'],
			[1.5, '1.5'],
			['ten', '"ten"'],
			[NaN, 'NaN'],
			[true, 'true'],
		] as Array<[unknown, string]>) {
			expect(problemOf(() => optionalNumber(bad, 'Concurrency', range)).problem).toBe(
				`must be a whole number from 1 to 50, got ${shown}`,
			);
		}
		expect(problemOf(() => optionalNumber(-1, 'Timeout (Ms)', { min: 1000 })).problem).toBe(
			'must be a number of at least 1000, got -1',
		);
	});

	it('selectors: a listed value, case and spaces ignored; anything else named in the message', () => {
		const modes = ['sum', 'custom'] as const;
		expect(requireChoice(' Custom ', 'Amount', modes)).toBe('custom');
		expect(
			problemOf(() => requireChoice('total', 'Amount', modes, { sum: 'Sum of Line Prices' }))
				.problem,
		).toBe('must be one of sum (Sum of Line Prices), custom, got "total"');
	});

	it('shows odd values faithfully in messages', () => {
		expect(describeValue(NaN)).toBe('NaN');
		expect(describeValue(-Infinity)).toBe('-Infinity');
		expect(describeValue(-0)).toBe('-0');
		expect(describeValue(BigInt(12))).toBe('12');
		const loop: Record<string, unknown> = {};
		loop.self = loop;
		expect(describeValue(loop)).toBe('[object Object]');
		expect(describeValue('x'.repeat(200))).toHaveLength(80);
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
		expect(requirePriceCents(4.35 * 3, 'Price')).toBe(1305);
		expect(problemOf(() => requirePriceCents('12,50', 'Price')).problem).toBe(
			'must use a dot for decimals and no thousands separators, like 1234.50, got "12,50"',
		);
		expect(problemOf(() => requirePriceCents('€12', 'Price')).problem).toBe(
			'must be a plain number like 12.50, without a currency sign or code (the Currency field sets it), got "€12"',
		);
		expect(problemOf(() => requirePriceCents(Infinity, 'Price')).problem).toBe(
			'must be a finite number with at most 2 decimals, like 19.99, got Infinity',
		);
		expect(problemOf(() => requirePriceCents(1e21, 'Price')).problem).toBe(
			'must be between -9999999999.99 and 9999999999.99, got 1e+21',
		);
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

	it('reads JSON text with a byte-order mark and surrounding whitespace', () => {
		const lines = parseLineItems('\ufeff\n [{"description":"B","price":2}] ', 'Line Items (JSON)');
		expect(lines[0].priceCents).toBe(200);
	});

	it('refuses prototype-changing keys anywhere in a line', () => {
		for (const text of [
			'[{"description":"x","price":1,"__proto__":{"admin":true}}]',
			'[{"description":"x","price":1,"meta":{"constructor":{"prototype":{}}}}]',
		]) {
			const error = problemOf(() => parseLineItems(text, 'Line Items (JSON)'));
			expect(error.field).toBe('Line Items (JSON), line 1');
			expect(error.problem).toMatch(/^must not contain the key "(__proto__|constructor)"/);
		}
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
