import {
	findServiceMessage,
	interpretResponse,
	parseRetryAfter,
} from '../../nodes/InvoiceService/transport/envelope';

const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}) => ({
	statusCode,
	headers: { 'content-type': 'application/json', ...headers },
	body,
});

describe('interpretResponse', () => {
	it('passes a plain record through', () => {
		expect(interpretResponse(json(200, { id: 'cust_1', name: 'A B', email: 'a@b.io' }))).toEqual({
			ok: true,
			data: { id: 'cust_1', name: 'A B', email: 'a@b.io' },
		});
	});

	it('unwraps the Bubble success envelope', () => {
		const outcome = interpretResponse(
			json(200, { status: 'success', response: { invoice_id: 'inv_1', status: 'sent' } }),
		);
		expect(outcome).toEqual({ ok: true, data: { invoice_id: 'inv_1', status: 'sent' } });
	});

	it('keeps an invoice whose own status is "sent"', () => {
		expect(interpretResponse(json(200, { invoice_id: 'inv_2', status: 'sent' })).ok).toBe(true);
	});

	it('parses a JSON body that arrived as text', () => {
		expect(interpretResponse({ statusCode: 200, headers: {}, body: '{"id":"cust_3"}' })).toEqual({
			ok: true,
			data: { id: 'cust_3' },
		});
	});

	it('treats HTTP 200 with "status":"error" as a failure with the service message', () => {
		expect(
			interpretResponse(json(200, { status: 'error', message: 'Quota exceeded' })),
		).toMatchObject({
			ok: false,
			httpCode: 200,
			serviceMessage: 'Quota exceeded',
		});
	});

	it("reads Bubble's nested {statusCode, body} shape inside a 200", () => {
		const outcome = interpretResponse(
			json(200, {
				statusCode: 400,
				body: { status: 'MISSING_DATA', message: 'Missing parameter email' },
			}),
		);
		expect(outcome).toMatchObject({
			ok: false,
			httpCode: 400,
			serviceMessage: 'Missing parameter email',
		});
	});

	it('reads error_class / translation', () => {
		const outcome = interpretResponse(
			json(401, { error_class: 'Unauthorized', translation: 'Bad token' }),
		);
		expect(outcome).toMatchObject({ ok: false, httpCode: 401, serviceMessage: 'Bad token' });
	});

	it('recognises an HTML page and plain text', () => {
		expect(
			interpretResponse({
				statusCode: 502,
				headers: {},
				body: '<html><body>Bad gateway</body></html>',
			}),
		).toMatchObject({
			ok: false,
			httpCode: 502,
			bodyKind: 'html',
		});
		expect(interpretResponse({ statusCode: 200, headers: {}, body: 'OK' })).toMatchObject({
			ok: false,
			bodyKind: 'text',
		});
		expect(interpretResponse({ statusCode: 200, headers: {}, body: '' })).toMatchObject({
			ok: false,
			bodyKind: 'empty',
		});
	});

	it('carries Retry-After', () => {
		expect(
			interpretResponse(
				json(429, { status: 'error', message: 'slow down' }, { 'retry-after': '3' }),
			),
		).toMatchObject({
			ok: false,
			httpCode: 429,
			retryAfterMs: 3000,
		});
	});
});

describe('parseRetryAfter and findServiceMessage', () => {
	it('reads seconds and HTTP dates', () => {
		expect(parseRetryAfter('2')).toBe(2000);
		expect(parseRetryAfter('0.5')).toBe(500);
		const now = Date.parse('2026-11-22T10:00:00Z');
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:05 GMT', now)).toBe(5000);
		expect(parseRetryAfter(undefined)).toBeUndefined();
		expect(parseRetryAfter('soon')).toBeUndefined();
	});

	it('finds messages in every error shape', () => {
		expect(findServiceMessage({ status: 'error', message: 'm1' })).toBe('m1');
		expect(findServiceMessage({ statusCode: 400, body: { message: 'm2' } })).toBe('m2');
		expect(findServiceMessage({ error: { message: 'm3' } })).toBe('m3');
		expect(findServiceMessage({ error: 'm4' })).toBe('m4');
		expect(findServiceMessage('nope')).toBeUndefined();
	});
});
