/**
 * The failures of a request the service (or something in its place) answered: each HTTP status in words a
 * person can act on, a success that is not one, an answer too large to be the service's, and a redirect.
 */
import { clip } from '../helpers/clip';
import { normalizeBaseUrl } from '../helpers/baseUrl';
import { shownUrl } from '../helpers/shownUrl';
import type { AnswerFailure } from './envelope';
import {
	type CallContext,
	type Failure,
	kilobytes,
	keyRefusedEarlier,
	MAX_QUOTED_CHARS,
	megabytes,
	UNKNOWN_OUTCOME_WAY_FORWARD,
} from './errors';

/** What a failure says: its message, and what to do about it (and whether the service may have acted). */
type Words = Pick<Failure, 'message' | 'description' | 'serviceMayHaveActed' | 'laterItems'>;

/** The facts an answer's words are made of; `said` is ": <the service's message>", or empty. */
interface Answer extends AnswerFailure {
	said: string;
	call: CallContext;
}

/**
 * The statuses that say "slow down": by the service's own rule it did not act on the request, so they are the
 * only answers safe to send again.
 */
const SLOW_DOWN_STATUSES = new Set([429, 503]);

/** What each HTTP status means to the user; a status not listed is worded by `otherStatus`. */
const STATUS_WORDS: Record<number, (answer: Answer) => Words> = {
	400: ({ serviceMessage, call }) => ({
		message: serviceMessage ?? `The service rejected the data sent to ${call.endpoint} (HTTP 400)`,
		description:
			'HTTP 400: the service found the input invalid. Correct the field it names and run again.',
	}),
	401: () => ({
		laterItems: keyRefusedEarlier(),
		message:
			'The API key was rejected (HTTP 401): check the API key in the Invoice Service API credential',
		description:
			"The service did not accept the key. Copy a current API key from the app's API settings into the credential.",
	}),
	403: ({ said, call }) => ({
		message: `Access denied to ${call.endpoint} (HTTP 403)${said}`,
		description:
			"The key was read but is not allowed to run this workflow. Check the key and the workflow's API permissions in the app.",
	}),
	404: ({ call }) => ({
		message: `Nothing found at ${call.url} (HTTP 404)`,
		description: `Check the Base URL and that the "${call.endpoint}" workflow is exposed as an API workflow. The Base URL should be the app address followed by /api/1.1/wf (or /version-test/api/1.1/wf for the development version).`,
	}),
	409: ({ serviceMessage, said, call }) => ({
		message: call.conflictMessage ?? `The record already exists (HTTP 409)${said}`,
		...(serviceMessage ? { description: `The service said: ${serviceMessage}` } : {}),
	}),
	429: ({ said }) => ({
		message: `Rate limited by the service (HTTP 429)${said}`,
		description:
			'The service allows only so many requests per minute. Lower the Concurrency option or raise Max Retry Wait.',
	}),
	503: ({ said }) => ({
		message: `The service is unavailable (HTTP 503)${said}`,
		description: 'The service said it is temporarily unavailable and did not process the request.',
	}),
};

/** A 2xx answer that is a failure all the same: not JSON (a wrong Base URL), or marked as an error. */
function successButFailed({ serviceMessage, bodyKind, call }: Answer): Words {
	if (bodyKind === 'html') {
		return {
			message: `The service answered ${call.endpoint} with an HTML page instead of JSON`,
			description: `Check the Base URL in the credential: ${call.url} does not look like the service's workflow API (it should end in /api/1.1/wf).`,
		};
	}
	if (bodyKind !== 'json') {
		return {
			message: `The service answered ${call.endpoint} with something that is not JSON`,
			description: `Check the Base URL in the credential (${call.url}).`,
		};
	}
	return {
		message:
			serviceMessage ?? `The service reported an error for ${call.endpoint} without saying why`,
		description: 'The service answered HTTP 200 but marked the call as failed ("status": "error").',
	};
}

/** A status without words of its own: a server error (5xx) or anything else. */
function otherStatus({ httpCode, bodyKind, said, call }: Answer): Words {
	if (httpCode >= 500) {
		const page = bodyKind === 'html' ? ' (an HTML error page, likely from a proxy)' : '';
		return {
			message: `The service had an error (HTTP ${httpCode})${page}${said}`,
			description: `Outcome unknown: not retried automatically, because the service may have acted before failing. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
			serviceMayHaveActed: true,
		};
	}
	return { message: `The service answered ${call.endpoint} with HTTP ${httpCode}${said}` };
}

/** Failure for a response the service did send. */
export function httpFailure(failure: AnswerFailure, call: CallContext): Failure {
	const { httpCode, retryAfterMs } = failure;
	const serviceMessage =
		failure.serviceMessage === undefined
			? undefined
			: clip(failure.serviceMessage, MAX_QUOTED_CHARS);
	const said = serviceMessage ? `: ${serviceMessage}` : '';
	const answer: Answer = { ...failure, serviceMessage, said, call };
	const words =
		httpCode >= 200 && httpCode < 300
			? successButFailed(answer)
			: (STATUS_WORDS[httpCode] ?? otherStatus)(answer);
	return {
		httpCode,
		...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
		...(SLOW_DOWN_STATUSES.has(httpCode)
			? { retryable: true, slowDown: true }
			: { retryable: false }),
		...words,
	};
}

/** A 2xx answer that lacks the field that identifies what was created. */
export function unexpectedAnswer(
	data: Record<string, unknown>,
	requiredField: string,
	call: CallContext,
): Failure {
	const keys = clip(Object.keys(data).join(', '), MAX_QUOTED_CHARS);
	return {
		retryable: false,
		serviceMayHaveActed: true,
		message: `Unexpected response from ${call.endpoint}: the answer has no "${requiredField}"`,
		description: `The service answered with success but without "${requiredField}" (fields received: ${keys || 'none'}), so it is unclear whether anything was created (outcome unknown). Check that the Base URL points to the Customer and Invoice Service. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
	};
}
/** What `answerTooLarge` says of the answer it stopped reading. */
export interface OversizedAnswer {
	statusCode: number;
	contentType: string;
	maxBytes: number;
	/** The Content-Length, when the answer announced one over the limit (nothing of it was read). */
	announced?: number;
}

/**
 * An answer larger than any answer of the service, whatever its status: reading stopped at the limit. It is not
 * the workflow API answering (a proxy's page, the app's own page, a log streamed by mistake), and the request did
 * reach the host, so a create's outcome is unknown and it is never sent again by itself.
 */
export function answerTooLarge(
	call: CallContext,
	{ statusCode, contentType, maxBytes, announced }: OversizedAnswer,
): Failure {
	const kind = contentType ? `, ${clip(contentType, 60)}` : '';
	const size =
		announced !== undefined ? `it announced ${megabytes(announced)}` : 'reading stopped there';
	return {
		httpCode: statusCode,
		retryable: false,
		serviceMayHaveActed: true,
		message: `The answer to ${call.endpoint} was larger than ${kilobytes(maxBytes)} (HTTP ${statusCode}${kind}; ${size})`,
		description: `It came from ${call.url}. No answer of the service is that large (its records and errors are a few hundred bytes), so this is not its workflow API answering: usually a page of a proxy in front of it, or of the app itself. Check the Base URL in the credential (it should end in /api/1.1/wf). Outcome unknown: the request reached that host, so it may or may not have been carried out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
	};
}

/** Whether a status is a redirect (3xx): the node never follows one for a create. */
export function isRedirect(statusCode: number): boolean {
	return statusCode >= 300 && statusCode <= 399;
}

/**
 * A create answered with a redirect. It is not followed: the HTTP client would turn a 301, 302 or 303 into a GET
 * (and report that GET's answer as the record created) and send a 307 or 308 with the customer's data to
 * wherever it points. The service did not act on a request it redirected, so nothing was created, and nothing
 * was sent to the target. The target is named without its query (it may carry a token), and when it is the
 * same workflow at another address, the Base URL that reaches it.
 */
export function redirectFailure(httpCode: number, location: unknown, call: CallContext): Failure {
	const given = Array.isArray(location) ? location[0] : location;
	let target: string | undefined;
	try {
		target =
			typeof given === 'string' && given.trim() ? new URL(given.trim(), call.url).href : undefined;
	} catch {
		target = undefined;
	}
	const notCreated = `Nothing was created (the service does not act on a request it redirects) and nothing was sent to the redirect's target.`;
	if (target === undefined) {
		return {
			httpCode,
			retryable: false,
			message: `The service answered ${call.endpoint} with a redirect (HTTP ${httpCode}) without saying where to: nothing was created`,
			description: `${notCreated} Check the Base URL in the credential: open it in a browser to see where the service is now.`,
		};
	}
	const reading = normalizeBaseUrl(shownUrl(target));
	const newBase =
		'url' in reading && reading.url !== call.url.replace(/\/[^/]*$/, '')
			? ` If that is the service's new address, set the Base URL in the credential to ${reading.url} and run the item again.`
			: ' Set the Base URL in the credential to the address the service answers at (the node never follows a redirect of a create).';
	return {
		httpCode,
		retryable: false,
		message: `The service answered ${call.endpoint} with a redirect (HTTP ${httpCode}) to ${shownUrl(target)}: nothing was created`,
		description: `${notCreated}${newBase}`,
	};
}
