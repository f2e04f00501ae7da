import { requireIdempotencyKey } from '../../nodes/InvoiceService/helpers/idempotencyKey';
import { FieldError } from '../../nodes/InvoiceService/helpers/validate';

const FIELD = 'Idempotency Key';
const key = (value: unknown, raw: unknown = '={{ $json.eventId }}') =>
	requireIdempotencyKey(value, () => raw, FIELD);
function refusal(value: unknown, raw?: unknown): FieldError {
	try {
		key(value, raw);
	} catch (error) {
		expect(error).toBeInstanceOf(FieldError);
		return error as FieldError;
	}
	throw new Error(`expected ${JSON.stringify(value)} to be refused`);
}

describe('an Idempotency Key', () => {
	it('is text (trimmed) or a finite number written as text', () => {
		expect(key(' evt_1 ')).toBe('evt_1');
		expect(key(12)).toBe('12');
		expect(key('12')).toBe('12');
		expect(key(0)).toBe('0');
	});

	it('blank is refused, saying what the expression gave and where a Webhook puts the event', () => {
		for (const [value, shown] of [
			[undefined, 'nothing'],
			[null, 'null'],
			['', '"" (blank)'],
			['  ', '"  " (blank)'],
			['\ufeff', '"\ufeff" (blank)'],
			['undefined', '"undefined" (blank)'],
			[' null ', '" null " (blank)'],
			['[object Object]', '"[object Object]" (blank)'],
		] as Array<[unknown, string]>) {
			const error = refusal(value);
			expect(error.field).toBe(FIELD);
			expect(error.message).toBe(
				`Idempotency Key is blank: the expression {{ $json.eventId }} gave ${shown}`,
			);
			expect(error.next).toMatch(
				/^After a Webhook trigger the event is under body, e\.g\. \{\{ \$json\.body\.eventId \}\}\. .*remove the Idempotency Key option to send without the check/,
			);
		}
	});

	it("suggests the user's own field under body, or to check it when it is under body already", () => {
		expect(refusal('', '={{ $json["event id"].value }}').next).toMatch(
			/e\.g\. \{\{ \$json\.body\["event id"\]\.value \}\}\. /,
		);
		expect(refusal('', '={{ $json.body.id }}').next).toMatch(
			/^Check the field's name in the input pane: this item has no value there\. /,
		);
		expect(refusal('', "={{ $('Webhook').item.json.id }}").next).toMatch(
			/e\.g\. \{\{ \$json\.body\.eventId \}\}\. /,
		);
	});

	it('a fixed or empty parameter says so; a long expression is cut', () => {
		expect(refusal('', '').problem).toBe('is blank: the field is empty');
		expect(refusal('', '').next).toMatch(/^After a Webhook/);
		expect(() => requireIdempotencyKey(undefined, () => undefined, FIELD)).toThrow(
			/^Idempotency Key is blank: the field is empty$/,
		);
		expect(refusal('', '=').problem).toBe('is blank: the expression is empty');
		const long = `={{ ${'$json.a ?? '.repeat(20)}'' }}`;
		const quoted = /the expression (.*) gave/.exec(refusal('', long).problem)![1];
		expect(quoted).toHaveLength(80);
		expect(quoted.endsWith('...')).toBe(true);
	});

	it('anything else that is not text or a number is refused, naming what it gave', () => {
		for (const [value, shown] of [
			[true, 'true'],
			[{ id: 1 }, '{"id":1}'],
			[['a'], '["a"]'],
			[NaN, 'NaN'],
			[Infinity, 'Infinity'],
		] as Array<[unknown, string]>) {
			expect(refusal(value).message).toBe(
				`Idempotency Key must be text or a number: the expression {{ $json.eventId }} gave ${shown}`,
			);
		}
		expect(refusal(true, true).problem).toBe('must be text or a number: the field contains true');
	});
});
