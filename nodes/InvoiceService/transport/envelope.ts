import type { IDataObject } from 'n8n-workflow';

/** What the service answered, as n8n's request helper returns it with `returnFullResponse`. */
export interface RawResponse {
	statusCode: number;
	headers: IDataObject;
	body: unknown;
}

/**
 * How one request ended: an answer (with the signals that can still cut its body short, and, for a streamed
 * body, `abort` to give up on it), or no answer at all (`deadlineHit` when the total deadline cut it off).
 */
export type Sent =
	| { raw: RawResponse; deadline: AbortSignal; signal: AbortSignal; abort?: () => void }
	| { error: unknown; deadlineHit: boolean; cancelled?: boolean };

/** What kind of body came back: `binary` for a file download, whose body is not read as text. */
export type BodyKind = 'json' | 'html' | 'text' | 'empty' | 'binary';

/**
 * A call the service answered but did not carry out as asked. The one failure type of an answer: the envelope
 * produces it, the error mapping (errors.ts `httpFailure`) turns it into words.
 */
export interface AnswerFailure {
	httpCode: number;
	serviceMessage?: string;
	bodyKind: BodyKind;
	retryAfterMs?: number;
}

export type Outcome = { ok: true; data: IDataObject } | ({ ok: false } & AnswerFailure);

function isObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBody(body: unknown): { kind: BodyKind; value: unknown } {
	if (body === undefined || body === null || body === '')
		return { kind: 'empty', value: undefined };
	if (Buffer.isBuffer(body)) return parseBody(body.toString('utf8'));
	if (typeof body !== 'string') return { kind: 'json', value: body };
	const text = body.trim();
	if (/^<(!doctype|html|head|body|\?xml)/i.test(text) || /<\/(html|body|title)>/i.test(text)) {
		return { kind: 'html', value: text };
	}
	try {
		return { kind: 'json', value: JSON.parse(text) };
	} catch {
		return { kind: 'text', value: text };
	}
}

/**
 * Finds the human message in any of the error shapes the service (a Bubble app) uses:
 * `{status:"error", message}`, `{statusCode, body:{status, message}}`, `{error_class, translation}`,
 * `{error: "..."}` or `{error: {message}}`.
 */
export function findServiceMessage(value: unknown): string | undefined {
	if (!isObject(value)) return undefined;
	for (const key of ['message', 'translation', 'error_description']) {
		if (typeof value[key] === 'string' && (value[key] as string).trim())
			return (value[key] as string).trim();
	}
	if (typeof value.error === 'string' && value.error.trim()) return value.error.trim();
	for (const key of ['body', 'error', 'response']) {
		const nested = findServiceMessage(value[key]);
		if (nested) return nested;
	}
	return undefined;
}

/** Seconds or an HTTP date in Retry-After, as milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: unknown, now = Date.now()): number | undefined {
	if (Array.isArray(value)) value = value[0];
	if (typeof value === 'number') return Math.max(0, value * 1000);
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

// An invoice's own `status` is "sent" and so on; only "error" (any case) marks a failed call.
function isErrorStatus(value: unknown): boolean {
	return typeof value === 'string' && value.toLowerCase() === 'error';
}

/**
 * Turns a raw answer into the record the operation asked for, or a failure. Unwraps Bubble's
 * `{"status":"success","response":{...}}` envelope, and treats an HTTP 200 whose body says
 * `"status":"error"` (or Bubble's `{"statusCode":400,"body":{...}}` inside a 200) as the failure it is.
 */
export function interpretResponse(raw: RawResponse): Outcome {
	const { kind, value } = parseBody(raw.body);
	const retryAfterMs = parseRetryAfter(raw.headers?.['retry-after']);
	const fail = (httpCode: number): Outcome => ({
		ok: false,
		httpCode,
		serviceMessage: findServiceMessage(value),
		bodyKind: kind,
		...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
	});

	if (raw.statusCode < 200 || raw.statusCode > 299) {
		// Bubble sometimes nests the real code: {"statusCode":400,"body":{...}} — prefer the HTTP status anyway.
		return fail(raw.statusCode);
	}
	if (kind !== 'json' || !isObject(value)) return fail(raw.statusCode);

	if (typeof value.statusCode === 'number' && value.statusCode >= 400 && isObject(value.body)) {
		return fail(value.statusCode);
	}
	if (value.error_class !== undefined || isErrorStatus(value.status)) {
		return fail(raw.statusCode);
	}
	if (isObject(value.response)) {
		// The Bubble envelope: only "success" carries a record.
		return String(value.status).toLowerCase() === 'success'
			? { ok: true, data: value.response }
			: fail(raw.statusCode);
	}
	return { ok: true, data: value };
}
