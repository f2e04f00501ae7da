import { httpFailure, unexpectedAnswer } from '../../nodes/InvoiceService/transport/answerFailures';
import {
	createdButNoPdf,
	deadlineFailure,
	downloadDeadlineFailure,
	fileTooLarge,
} from '../../nodes/InvoiceService/transport/errors';
import {
	findErrorCode,
	networkFailure,
} from '../../nodes/InvoiceService/transport/networkFailures';
import { mayHaveActed, nodeApiError } from '../../nodes/InvoiceService/transport/nodeError';

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
			'Nothing found at https://app.example.com/api/1.1/wf/create-customer (HTTP 404)',
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
		// The retryable answers are exactly the service's "slow down" ones.
		expect(failure.slowDown === true).toBe(retryable);
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
		expect(networkFailure('EAI_AGAIN', 'getaddrinfo EAI_AGAIN', call)).toMatchObject({
			retryable: true,
			message:
				'The host app.example.com could not be looked up just now (DNS: EAI_AGAIN): nothing was sent',
		});
		// Retryable, but nobody said "slow down": nobody else pauses for it.
		expect(networkFailure('ECONNREFUSED', 'connect ECONNREFUSED', call).slowDown).toBeUndefined();
	});

	it('never retries a timeout or a reset, and says the outcome is unknown', () => {
		for (const [code, text] of [
			['ECONNRESET', 'socket hang up'],
			['ECONNABORTED', 'timeout of 100ms exceeded'],
			[undefined, 'socket hang up'],
		] as const) {
			const failure = networkFailure(code, text, call);
			expect(failure.retryable).toBe(false);
			expect(failure.message).toMatch(/: outcome unknown$/);
			expect(failure.description).toMatch(
				/Outcome unknown: .*Check the service; if the record is not there, enter this error's resend code in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow\./,
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

describe('deadline, size limit and the PDF of a created invoice', () => {
	it('a create cut by the deadline is outcome unknown, never retryable, and names the Timeout', () => {
		const failure = deadlineFailure(call, 3000);
		expect(failure.retryable).toBe(false);
		expect(failure.message).toBe(
			'No answer from create-customer within the time-out: outcome unknown',
		);
		expect(failure.description).toMatch(/cut off\. Outcome unknown: .* Resend Unknown Outcomes Of/);
		expect(failure.description).toMatch(/headers and body.*Timeout option \(3 s\)/);
		expect(downloadDeadlineFailure(1500).message).toBe(
			'the download did not finish within the time-out (1.5 s)',
		);
	});

	it('a file over the limit says the limit and, when announced, its size', () => {
		expect(fileTooLarge(50 * 1024 * 1024).message).toBe(
			'the file is larger than the limit of 50 MB',
		);
		expect(fileTooLarge(1024 * 1024, 256 * 1024 * 1024).message).toBe(
			'the file is larger than the limit of 1 MB (it announced 256 MB)',
		);
	});

	it('a PDF failure says the invoice exists, once, and keeps the HTTP code', () => {
		const failure = createdButNoPdf(
			{ httpCode: 404, retryable: true, message: 'https://x/inv_1.pdf answered HTTP 404' },
			'inv_1',
		);
		expect(failure).toEqual({
			httpCode: 404,
			retryable: false,
			// The invoice exists: nobody may send the create again, n8n's Retry On Fail included.
			serviceMayHaveActed: true,
			message:
				'Invoice inv_1 was created, but its PDF could not be downloaded: https://x/inv_1.pdf answered HTTP 404',
			description:
				"Retry the failed execution (from the executions list, or let Retry On Fail run the node again): the retry does not create the invoice again, it only downloads the PDF. Or fetch the PDF from the invoice's download_url.",
		});
		expect(createdButNoPdf(fileTooLarge(1024 * 1024), 'inv_2').description).toMatch(
			/^The download was stopped at the limit\. .* Retry the failed execution .* it only downloads the PDF/,
		);
	});
});

describe('"may have acted" is a property of the error', () => {
	const node = { name: 'Invoice Service', type: 'x', typeVersion: 1, position: [0, 0] } as never;
	const failure = { retryable: false, message: 'Outcome unknown', serviceMayHaveActed: true };

	it('is set from the failure, and survives a copy and a JSON round trip of the error', () => {
		const error = nodeApiError(node, failure, { itemIndex: 3 });
		expect(mayHaveActed(error)).toBe(true);
		expect(mayHaveActed({ ...error })).toBe(true);
		expect(mayHaveActed(JSON.parse(JSON.stringify({ context: error.context })))).toBe(true);
	});

	it('is not set for a refusal, nor for an error that is not one of ours', () => {
		const refused = nodeApiError(
			node,
			{ ...failure, serviceMayHaveActed: false },
			{ itemIndex: 0 },
		);
		expect(mayHaveActed(refused)).toBe(false);
		expect(mayHaveActed(new Error('x'))).toBe(false);
		expect(mayHaveActed(undefined)).toBe(false);
	});
});

describe('findErrorCode: what never left, whoever wrapped the error', () => {
	it.each([
		[{ code: 'CERT_HAS_EXPIRED' }, 'CERT_HAS_EXPIRED'],
		[
			{ message: 'wrapped', cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' } },
			'DEPTH_ZERO_SELF_SIGNED_CERT',
		],
		// n8n 1.x: its sentence replaces the message, the original text stays in `messages`, the code is gone.
		[
			{
				message: 'The service refused the connection - perhaps it is offline',
				messages: ['connect ECONNREFUSED 127.0.0.1:9'],
			},
			'ECONNREFUSED',
		],
		[
			{
				message:
					'The connection cannot be established, this usually occurs due to an incorrect host (domain) value',
			},
			'ENOTFOUND',
		],
		[{ message: 'x', messages: ['getaddrinfo ENOTFOUND no-such-app.invalid'] }, 'ENOTFOUND'],
		[{ message: 'certificate has expired' }, 'CERT_HAS_EXPIRED'],
		[{ message: 'self-signed certificate' }, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
		[{ message: 'unable to verify the first certificate' }, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
		[
			{
				message:
					"Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
			},
			'ERR_TLS_CERT_ALTNAME_INVALID',
		],
		[{ message: 'socket hang up' }, undefined],
	])('%j → %s', (error, code) => {
		expect(findErrorCode(error)).toBe(code);
	});

	it('a certificate refused never sends, never retries, and ends sending for the run', () => {
		const failure = networkFailure('ERR_TLS_CERT_ALTNAME_INVALID', 'mismatch', call);
		expect(failure).toMatchObject({
			retryable: false,
			message: 'The certificate of app.example.com is for another name',
		});
		expect(failure.serviceMayHaveActed).toBeUndefined();
		expect(failure.laterItems?.message).toMatch(
			/^Not sent: the certificate of app\.example\.com is for another name/,
		);
	});
});
