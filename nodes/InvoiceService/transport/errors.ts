/**
 * Every way a call can fail, turned into words a person can act on. Pure: the request module decides what to
 * retry and builds the n8n error from what these functions return. This file holds the words every kind shares
 * and the failures of the node's own limits (deadline, size, Stop); an answer's failures are in
 * answerFailures.ts, and those of a request that got no answer in networkFailures.ts.
 */

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
	/**
	 * The failure every later item of the run gets instead of being sent, when this one shows that sending more
	 * cannot help (the key refused, a host that does not exist, a certificate the machine does not trust).
	 */
	laterItems?: Failure;
}

/** One attempt's end: the value, or how it failed. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export interface CallContext {
	/** The endpoint, e.g. "create-customer", for messages. */
	endpoint: string;
	/** The URL called, as messages show it (`shownUrl`: no user name, password or query). */
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

export const UNKNOWN_OUTCOME = `Outcome unknown: the request reached the service but no answer came back, so it may or may not have been carried out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`;

/**
 * The title of a request that got no answer in time, whether its socket went quiet or the deadline passed; its
 * description carries UNKNOWN_OUTCOME.
 */
export function noAnswerInTime(call: CallContext): string {
	return `No answer from ${call.endpoint} within the time-out: outcome unknown`;
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
		description: `The whole answer (headers and body) must arrive within the Timeout option (${seconds(timeoutMs)}); it did not, so the request was cut off. ${UNKNOWN_OUTCOME}`,
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
export function kilobytes(bytes: number): string {
	return `${Math.round(bytes / 1024)} KB`;
}

export function megabytes(bytes: number): string {
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
		message: `The execution was stopped while ${call.endpoint} waited for the service's answer: outcome unknown`,
		description: `The request had been sent, so it may or may not have been carried out. ${UNKNOWN_OUTCOME_WAY_FORWARD}`,
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
export function safeHost(url: string, part: 'host' | 'hostname' = 'host'): string {
	try {
		return new URL(url)[part];
	} catch {
		return url;
	}
}
