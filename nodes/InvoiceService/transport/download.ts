/**
 * The PDF download's own rules: which download_url can be fetched, how a streamed answer is read (never past the
 * size limit, never a socket left open), and what counts as a PDF. The request itself goes through the client's
 * one door (request.ts), which also decides what is retried.
 */
import { clip } from '../helpers/clip';
import { hasUserinfo, shownUrl } from '../helpers/shownUrl';
import { discard, readAtMost } from './body';
import type { Sent } from './envelope';
import { httpFailure } from './answerFailures';
import {
	type Attempt,
	type CallContext,
	downloadDeadlineFailure,
	type Failure,
	fileTooLarge,
	MAX_QUOTED_CHARS,
} from './errors';
import { noAnswerFailure } from './networkFailures';

export interface PdfDownload {
	/** The invoice that was created: every failure of the download says it exists. */
	invoiceId: string;
	/** The invoice's download_url, as the service gave it (checked here). */
	url: unknown;
	itemIndex: number;
	/** A larger file is refused at this many bytes, without reading the rest. */
	maxBytes: number;
}

export interface PdfFile {
	data: Buffer;
	contentType?: string;
}

/**
 * Whether the service's download_url is something to fetch at all: http or https, without a user name or
 * password (the HTTP client would send those as Basic credentials, in place of the key on the service's own host).
 */
export function isFetchable(url: unknown): url is string {
	return typeof url === 'string' && /^https?:\/\//i.test(url) && !hasUserinfo(url);
}

/** The failure of a download_url that is not one (`isFetchable` said no); a secret in it is never shown. */
export function unusableUrl(url: unknown): Failure {
	if (typeof url === 'string' && hasUserinfo(url)) {
		return {
			retryable: false,
			message: `the service's download_url carries a user name or password, which the node never sends`,
			description: `The download_url was ${shownUrl(url)} (shown without them). Have the app give a download_url without credentials in it.`,
		};
	}
	const given = clip(JSON.stringify(url ?? null), MAX_QUOTED_CHARS);
	return { retryable: false, message: `the service gave no usable download_url (got ${given})` };
}

/** The failure of a file that arrived whole but is not a PDF; undefined when it is one. */
export function notAPdf(file: PdfFile, url: string): Failure | undefined {
	if (file.data.subarray(0, 5).toString('latin1') === '%PDF-') return undefined;
	const message = `what came back is not a PDF (content type ${clip(file.contentType ?? 'unknown', 60)}, ${file.data.length} bytes)`;
	return { retryable: false, message, description: `It came from ${url}.` };
}

export interface FileLimits {
	call: CallContext;
	maxBytes: number;
	/** The Timeout option, for the message of a download cut off by it. */
	timeoutMs: number;
}

/**
 * One download attempt, from how the request ended to the file or a failure. GET is safe to repeat, so a
 * connection that broke is retryable; a file cut by the deadline or over the size limit is not.
 */
export async function receiveFile(
	sent: Sent,
	{ call, maxBytes, timeoutMs }: FileLimits,
): Promise<Attempt<PdfFile>> {
	if ('error' in sent) {
		if (sent.deadlineHit) return { ok: false, failure: downloadDeadlineFailure(timeoutMs) };
		return { ok: false, failure: noAnswerFailure(sent.error, call, { safeToRepeat: true }) };
	}
	const { raw } = sent;
	if (raw.statusCode < 200 || raw.statusCode > 299) {
		sent.abort?.();
		discard(raw.body);
		const failure = httpFailure({ httpCode: raw.statusCode, bodyKind: 'binary' }, call);
		// Only "slow down" answers keep their meaning for a file; anything else is just the file missing.
		if (failure.slowDown) return { ok: false, failure };
		const message = `${call.url} answered HTTP ${raw.statusCode}`;
		return { ok: false, failure: { httpCode: raw.statusCode, retryable: false, message } };
	}
	const body = await readAtMost(raw, maxBytes, sent.signal, { abortable: true });
	// Refused or broken: abort the request itself, which closes the socket (destroying the body stream alone
	// leaves it open when the helper hands over a wrapper stream).
	if (!('data' in body)) sent.abort?.();
	if ('tooLarge' in body) return { ok: false, failure: fileTooLarge(maxBytes, body.announced) };
	if ('error' in body) {
		if (sent.deadline.aborted) return { ok: false, failure: downloadDeadlineFailure(timeoutMs) };
		// The execution was stopped while the file came in: not a service failure.
		if (sent.signal.aborted) throw body.error;
		return { ok: false, failure: noAnswerFailure(body.error, call, { safeToRepeat: true }) };
	}
	const contentType = raw.headers?.['content-type'];
	return {
		ok: true,
		value: { data: body.data, ...(typeof contentType === 'string' ? { contentType } : {}) },
	};
}
