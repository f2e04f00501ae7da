import {
	findErrorCode,
	httpFailure,
	networkFailure,
	unexpectedAnswer,
} from '../../nodes/InvoiceService/transport/errors';

const call = {
	endpoint: 'create-customer',
	url: 'https://app.example.com/api/1.1/wf/create-customer',
};

describe('httpFailure', () => {
	it.each([
		[400, 'Email is invalid', 'Email is invalid', false],
		[
			401,
			undefined,
			'The API key was rejected (HTTP 401): check the API key in the Invoice Service API credential',
			false,
		],
		[
			404,
			undefined,
			'Nothing found at https://app.example.com/api/1.1/wf/create-customer (HTTP 404): check the Base URL and that the "create-customer" workflow is exposed as an API workflow',
			false,
		],
		[409, undefined, 'The record already exists (HTTP 409)', false],
		[429, 'Too many requests', 'Rate limited by the service (HTTP 429): Too many requests', true],
		[503, undefined, 'The service is unavailable (HTTP 503)', true],
		[500, 'boom', 'The service had an error (HTTP 500): boom', false],
	])('HTTP %i', (httpCode, serviceMessage, message, retryable) => {
		const failure = httpFailure({ httpCode, serviceMessage, bodyKind: 'json' }, call);
		expect(failure.message).toBe(message);
		expect(failure.retryable).toBe(retryable);
		expect(failure.httpCode).toBe(httpCode);
	});

	it("uses the operation's conflict message for 409", () => {
		const failure = httpFailure(
			{ httpCode: 409, bodyKind: 'json' },
			{ ...call, conflictMessage: 'A customer with the e-mail a@b.io already exists' },
		);
		expect(failure.message).toBe('A customer with the e-mail a@b.io already exists');
	});

	it('says an HTML 502 is an HTML page and does not retry it', () => {
		const failure = httpFailure({ httpCode: 502, bodyKind: 'html' }, call);
		expect(failure.message).toBe(
			'The service had an error (HTTP 502) (an HTML error page, likely from a proxy)',
		);
		expect(failure.retryable).toBe(false);
		expect(failure.description).toMatch(/may have acted/);
	});

	it('explains a 200 HTML page as a wrong base URL', () => {
		expect(httpFailure({ httpCode: 200, bodyKind: 'html' }, call).description).toMatch(
			/Check the Base URL/,
		);
		expect(httpFailure({ httpCode: 200, bodyKind: 'text' }, call).message).toMatch(/not JSON/);
	});
});

describe('networkFailure', () => {
	it('retries what was never sent', () => {
		expect(networkFailure('ECONNREFUSED', 'connect ECONNREFUSED', call)).toMatchObject({
			retryable: true,
			message:
				'Cannot reach the service at app.example.com (connection refused): check the Base URL and that the service is up',
		});
		expect(networkFailure('ENOTFOUND', 'getaddrinfo', call)).toMatchObject({
			retryable: true,
			message: 'Cannot find the host app.example.com: check the Base URL in the credential',
		});
	});

	it('never retries a timeout or a reset, and says the outcome is unknown', () => {
		for (const [code, text] of [
			['ECONNRESET', 'socket hang up'],
			['ECONNABORTED', 'timeout of 100ms exceeded'],
			[undefined, 'socket hang up'],
		] as const) {
			const failure = networkFailure(code, text, call);
			expect(failure.retryable).toBe(false);
			expect(failure.message).toMatch(
				/Outcome unknown: .*Check the service before running this item again/,
			);
		}
		expect(networkFailure('ETIMEDOUT', 'x', call).message).toMatch(
			/^No answer from create-customer within the time-out/,
		);
	});

	it('finds the code along the cause chain', () => {
		const error = Object.assign(new Error('outer'), {
			cause: Object.assign(new Error('inner'), { code: 'ECONNREFUSED' }),
		});
		expect(findErrorCode(error)).toBe('ECONNREFUSED');
		expect(findErrorCode(new Error('none'))).toBeUndefined();
	});
});

it('unexpectedAnswer lists the fields that did come', () => {
	const failure = unexpectedAnswer({ name: 'x' }, 'id', call);
	expect(failure.message).toBe('Unexpected response from create-customer: the answer has no "id"');
	expect(failure.description).toMatch(/fields received: name/);
});
