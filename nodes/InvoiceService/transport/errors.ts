/**
 * Every way a call can fail, turned into words a person can act on. Pure: the request module decides what to
 * retry and builds the n8n error from what these functions return.
 */
import { clip } from '../helpers/clip';
import type { AnswerFailure } from './envelope';

/**
 * The most characters of a text the service or the network sized (a service's message, an error's own text, the
 * field names of an answer) that a failure keeps: it ends up on the error item and in the run record.
 */
export const MAX_QUOTED_CHARS = 500;

/** How a failed attempt is classified. */
export interface Failure {
	/** HTTP status, when the service answered. */
	httpCode?: number;
	message: string;
	description?: string;
	/** True only when the service certainly did not act on the request, so sending it again is safe. */
	retryable: boolean;
	/**
	 * The service said "slow down" (429, 503): it did not act, and asks for fewer requests for a while. Only
	 * these answers are retried, and from the service's workflow API they pause everybody using the same key.
	 */
	slowDown?: boolean;
	retryAfterMs?: number;
	/**
	 * The service acted on the request, or may have (no answer, a server error, an answer without an id): the
	 * item must not be sent again by anybody, n8n's Retry On Fail included.
	 */
	serviceMayHaveActed?: boolean;
}

/** One attempt's end: the value, or how it failed. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export interface CallContext {
	/** The endpoint, e.g. "create-customer", for messages. */
	endpoint: string;
	/** The full URL called (never contains the API key: that travels in a header). */
	url: string;
	/** What a 409 means for this call, e.g. which e-mail already exists. */
	conflictMessage?: string;
}

/**
 * The way forward from every "outcome unknown": the node never sends such an item again by itself, so the user
 * checks, and only then lets it be sent again. The item's step puts the outcome's own resend code in its place
 * (exactlyOnce/resendCodes.ts, `withCode`); docs/reference.md describes it.
 */
export const UNKNOWN_OUTCOME_WAY_FORWARD =
	"Check the service; if the record is not there, enter this error's resend code in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow.";

const UNKNOWN_OUTCOME = `Outcome unknown: the request reached the service but no answer came back, so it may or may not have been carried out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`;

/** The message of a request that got no answer in time, whether its socket went quiet or the deadline passed. */
function noAnswerInTime(call: CallContext): string {
	return `No answer from ${call.endpoint} within the time-out. ${UNKNOWN_OUTCOME}`;
}

/** What a failure says: its message, and what to do about it (and whether the service may have acted). */
type Words = Pick<Failure, 'message' | 'description' | 'serviceMayHaveActed'>;

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
		message: `Nothing found at ${call.url} (HTTP 404): check the Base URL and that the "${call.endpoint}" workflow is exposed as an API workflow`,
		description:
			'The Base URL should be the app address followed by /api/1.1/wf (or /version-test/api/1.1/wf for the development version).',
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

// Codes that mean the request never reached the service: safe to send again.
const NOT_SENT = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'ENETUNREACH',
	'EHOSTUNREACH',
	'EADDRNOTAVAIL',
]);
const TIMEOUT = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);

/** Finds the first error code (ECONNREFUSED, ...) along an error's cause chain. */
export function findErrorCode(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
		const { code } = current as { code?: unknown };
		if (typeof code === 'string' && /^E[A-Z_]+$|^ERR_/.test(code)) return code;
		current = (current as { cause?: unknown }).cause;
	}
	return undefined;
}

/** Failure for a request that got no HTTP answer. */
export function networkFailure(
	code: string | undefined,
	rawMessage: string,
	call: CallContext,
): Failure {
	const host = safeHost(call.url);
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
		return {
			retryable: true,
			message: `Cannot find the host ${host}: check the Base URL in the credential`,
			description: `DNS lookup failed (${code}). Nothing was sent.`,
		};
	}
	if (code !== undefined && NOT_SENT.has(code)) {
		return {
			retryable: true,
			message: `Cannot reach the service at ${host} (connection refused): check the Base URL and that the service is up`,
			description: `Connection failed (${code}). Nothing was sent.`,
		};
	}
	const timedOut = (code !== undefined && TIMEOUT.has(code)) || /timeout/i.test(rawMessage);
	return {
		retryable: false,
		serviceMayHaveActed: true,
		message: timedOut
			? noAnswerInTime(call)
			: `The connection to ${host} broke before the answer to ${call.endpoint} arrived. ${UNKNOWN_OUTCOME}`,
		description: `${code ?? 'network error'}: ${clip(rawMessage, MAX_QUOTED_CHARS)}`,
	};
}

/** The errors n8n's SSRF protection throws (`@n8n/backend-network`, n8n 2.x) when it refuses an address. */
const SSRF_REFUSALS = new Set(['SsrfBlockedIpError', 'SsrfBlockedHostnameError']);

/**
 * A request n8n itself refused to make because its SSRF protection blocks the address: nothing reached that
 * address, so this is neither a network fault nor an unknown outcome, and sending it again would only be
 * refused again. Recognised by the error's class name along the cause chain (n8n wraps it in a NodeApiError
 * for authenticated requests); an n8n without the protection never throws it.
 */
function ssrfRefusal(error: unknown, call: CallContext): Failure | undefined {
	type Link = { name?: unknown; ip?: unknown; hostname?: unknown; cause?: unknown };
	const chain: Link[] = [];
	for (let current = error; typeof current === 'object' && current !== null && chain.length < 6; ) {
		chain.push(current as Link);
		current = (current as Link).cause;
	}
	// A wrapper may carry n8n's class name without the error's fields (axios copies the name only).
	if (!chain.some(({ name }) => typeof name === 'string' && SSRF_REFUSALS.has(name)))
		return undefined;
	const field = (key: 'ip' | 'hostname') =>
		chain.map((link) => link[key]).find((value): value is string => typeof value === 'string');
	const host = field('hostname') ?? safeHost(call.url, 'hostname');
	const address = field('ip');
	const target = address && address !== host ? `${host} (${address})` : host;
	const range = address
		? ` or N8N_SSRF_ALLOWED_IP_RANGES=${address}/${address.includes(':') ? 128 : 32}`
		: '';
	return {
		retryable: false,
		message: `n8n's SSRF protection refused the address ${target}: nothing was sent to ${call.endpoint}`,
		description: `n8n blocks requests to this address (N8N_SSRF_PROTECTION_ENABLED is on and the address is in N8N_SSRF_BLOCKED_IP_RANGES or N8N_SSRF_BLOCKED_HOSTNAMES). If it should be reachable, the n8n administrator allows it with N8N_SSRF_ALLOWED_HOSTNAMES=${host}${range}, then run this item again.`,
	};
}

/**
 * A request that got no (whole) HTTP answer. A GET is safe to send again whatever broke; a POST may not be.
 * One that n8n's SSRF protection refused was never sent, and is not sent again either.
 */
export function noAnswerFailure(
	error: unknown,
	call: CallContext,
	{ safeToRepeat }: { safeToRepeat: boolean },
): Failure {
	const refused = ssrfRefusal(error, call);
	if (refused) return refused;
	const message = error instanceof Error ? error.message : String(error);
	const failure = networkFailure(findErrorCode(error), message, call);
	return safeToRepeat ? { ...failure, retryable: true } : failure;
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
	const kind = contentType ? `, ${clip(contentType, 100)}` : '';
	const size =
		announced !== undefined ? `it announced ${megabytes(announced)}` : 'reading stopped there';
	return {
		httpCode: statusCode,
		retryable: false,
		serviceMayHaveActed: true,
		message: `The answer to ${call.endpoint} from ${call.url} was larger than ${kilobytes(maxBytes)} (HTTP ${statusCode}${kind}; ${size})`,
		description: `No answer of the service is that large (its records and errors are a few hundred bytes), so this is not its workflow API answering: usually a page of a proxy in front of it, or of the app itself. Check the Base URL in the credential (it should end in /api/1.1/wf). Outcome unknown: the request reached that host, so it may or may not have been carried out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
	};
}

/** Seconds for messages: "3 s", "0.5 s". */
export function seconds(ms: number): string {
	return `${ms >= 10_000 || ms % 1000 === 0 ? Math.round(ms / 1000) : (ms / 1000).toFixed(1)} s`;
}

/**
 * A request cut off by the Timeout, which bounds the whole exchange (headers and body), not only silences. For a
 * create the service may have acted, so the outcome is unknown and the request is never sent again.
 */
export function deadlineFailure(call: CallContext, timeoutMs: number): Failure {
	return {
		retryable: false,
		serviceMayHaveActed: true,
		message: noAnswerInTime(call),
		description: `The whole answer (headers and body) must arrive within the Timeout option (${seconds(timeoutMs)}); it did not, so the request was cut off.`,
	};
}

/** A file download cut off by the Timeout before its last byte. */
export function downloadDeadlineFailure(timeoutMs: number): Failure {
	return {
		retryable: false,
		message: `the download did not finish within the time-out (${seconds(timeoutMs)})`,
		description:
			'The whole file must arrive within the Timeout option; the download was cut off. Raise Timeout for large files or a slow network.',
	};
}

/** A file larger than the node accepts, refused at the limit without reading the rest. */
export function fileTooLarge(maxBytes: number, announcedBytes?: number): Failure {
	const size = announcedBytes !== undefined ? ` (it announced ${megabytes(announcedBytes)})` : '';
	return {
		retryable: false,
		message: `the file is larger than the limit of ${megabytes(maxBytes)}${size}`,
		description:
			'The download was stopped at the limit. Raise the Max PDF Size option if such large PDFs are expected.',
	};
}

function kilobytes(bytes: number): string {
	return `${Math.round(bytes / 1024)} KB`;
}

function megabytes(bytes: number): string {
	const mb = bytes / 1024 / 1024;
	return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/**
 * Any failure of the PDF download of an invoice that was created: the invoice exists whatever happened, and the
 * message must say so, or a re-run creates a second one. Keeps the HTTP code; never retried from here.
 */
export function createdButNoPdf(failure: Failure, invoiceId: string): Failure {
	return {
		...(failure.httpCode !== undefined ? { httpCode: failure.httpCode } : {}),
		retryable: false,
		serviceMayHaveActed: true,
		message: `Invoice ${invoiceId} was created, but its PDF could not be downloaded: ${failure.message}`,
		description: `${failure.description ? `${failure.description} ` : ''}Retry the failed execution (from the executions list, or let Retry On Fail run the node again): the retry does not create the invoice again, it only downloads the PDF. Or fetch the PDF from the invoice's download_url.`,
	};
}

/**
 * A create cut off because the execution was stopped (the user's Stop, or the workflow's time-out) after the
 * request had left: the service may have received it, so its outcome is unknown.
 */
export function cancelledFailure(call: CallContext): Failure {
	return {
		retryable: false,
		serviceMayHaveActed: true,
		message: `The execution was stopped while ${call.endpoint} waited for the service's answer. Outcome unknown: the request had been sent, so it may or may not have been carried out.`,
		description: UNKNOWN_OUTCOME_WAY_FORWARD,
	};
}

/**
 * An item not sent because the service's pace for its key (after "slow down" answers) held its first try past Max
 * Retry Wait + 15 s (transport/request.ts, LAST_TRY_AFTER_MS).
 */
export function heldPastRetryWait(maxRetryWaitMs: number): Failure {
	return {
		retryable: false,
		message: `Not sent: the service asked for fewer requests, and this item waited for its turn past Max Retry Wait (${seconds(maxRetryWaitMs)})`,
		description:
			'Nothing was sent to the service for this item. Lower Concurrency, or raise Max Retry Wait, and run the item again.',
	};
}

/** An item not sent because the service refused the API key to an earlier request of the same run. */
export function keyRefusedEarlier(): Failure {
	return {
		retryable: false,
		message:
			'Not sent: the service refused the API key earlier in this run (HTTP 401): check the API key in the Invoice Service API credential',
		description:
			"After the first 401 the node sends nothing more with this key in the run. Copy a current API key from the app's API settings into the credential, then run the items that were not sent.",
	};
}

/** The URL's host (with its port) or hostname, or the URL itself when it does not parse. */
function safeHost(url: string, part: 'host' | 'hostname' = 'host'): string {
	try {
		return new URL(url)[part];
	} catch {
		return url;
	}
}
