/**
 * Reading an answer's body with a size limit, whatever the answer: the service's JSON, an error page, a PDF. A
 * body is streamed from the socket and never held past its limit, so a page that never ends (a broken proxy, an
 * app streaming a log) costs the limit, not n8n's memory.
 */
import { answerTooLarge, isRedirect, redirectFailure } from './answerFailures';
import type { RawResponse, Sent } from './envelope';
import { type Attempt, type CallContext, cancelledFailure, deadlineFailure } from './errors';
import { noAnswerFailure } from './networkFailures';

/**
 * The most the node reads of any answer to a create (2xx, 4xx or 5xx, with or without a Content-Length). The
 * service's records and error bodies are a few hundred bytes; a proxy's or the app's own error page is a few
 * KiB (nginx under 1 KiB, a CDN's page about 10 KiB). 64 KiB is a hundred times a real answer, and with the
 * default five items at once the node never holds more than a few hundred KiB of answers.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** A body read whole, one stopped at its limit (`announced` when its Content-Length said so), or a broken one. */
export type Body = { data: Buffer } | { tooLarge: true; announced?: number } | { error: unknown };

/**
 * Reads a streamed body into memory, but never more than `maxBytes`: a body that grows past it (no length, or a
 * false one) is stopped there, and the stream destroyed. An abort of `signal` (the deadline) does the same. A
 * Content-Length over the limit is refused before the first byte when the caller can abort the request
 * (`abortable`), which closes the socket; destroying a stream that was never read does not always close it
 * (seen with n8n's helper on 2.41.1), so without an abort the body is read up to the limit first.
 */
export async function readAtMost(
	raw: RawResponse,
	maxBytes: number,
	signal: AbortSignal,
	{ abortable }: { abortable: boolean },
): Promise<Body> {
	const { body } = raw;
	if (!isStream(body)) {
		// Already in memory (a helper that read it whole): still no larger than the limit past this point.
		const data = inMemory(body);
		return data.length > maxBytes ? { tooLarge: true } : { data };
	}
	const stream = body;
	const length = Number(raw.headers?.['content-length']);
	const announced = Number.isFinite(length) && length > maxBytes ? length : undefined;
	const tooLarge = { tooLarge: true, ...(announced !== undefined ? { announced } : {}) } as const;
	if (announced !== undefined && abortable) {
		stream.destroy();
		return tooLarge;
	}
	const stop = () => stream.destroy(new Error('The request was cut off by the deadline'));
	if (signal.aborted) stop();
	signal.addEventListener('abort', stop, { once: true });
	const chunks: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
			size += bytes.length;
			if (size > maxBytes) {
				stream.destroy();
				return tooLarge;
			}
			chunks.push(bytes);
		}
	} catch (error) {
		return { error };
	} finally {
		signal.removeEventListener('abort', stop);
	}
	return { data: Buffer.concat(chunks, size) };
}

/** An answer whose body is not wanted: a stream left unread would keep its socket. */
export function discard(body: unknown): void {
	const stream = body as { destroy?: () => void } | undefined;
	if (typeof stream?.destroy === 'function') stream.destroy();
}

function inMemory(body: unknown): Buffer {
	if (Buffer.isBuffer(body)) return body;
	if (typeof body === 'string') return Buffer.from(body, 'utf8');
	return body === undefined || body === null ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
}

type DestroyableStream = NodeJS.ReadableStream & { destroy(error?: Error): void };

function isStream(body: unknown): body is DestroyableStream {
	const candidate = body as Partial<DestroyableStream> | null | undefined;
	return (
		typeof candidate?.[Symbol.asyncIterator] === 'function' &&
		typeof candidate.destroy === 'function'
	);
}

/**
 * One create's answer, read whole within MAX_ANSWER_BYTES, ready for the envelope; or how reading it failed. The
 * request reached the service whichever way the body ends, so every failure here is an unknown outcome: cut by
 * the deadline, stopped by the user, broken, or larger than any answer of the service. A redirect is the one
 * exception, refused unread: the service does not act on a request it redirects.
 */
export async function receiveAnswer(
	sent: Extract<Sent, { raw: RawResponse }>,
	{ call, timeoutMs }: { call: CallContext; timeoutMs: number },
): Promise<Attempt<RawResponse>> {
	const { raw } = sent;
	if (isRedirect(raw.statusCode)) {
		sent.abort?.();
		discard(raw.body);
		return { ok: false, failure: redirectFailure(raw.statusCode, raw.headers?.location, call) };
	}
	const abortable = sent.abort !== undefined;
	const body = await readAtMost(raw, MAX_ANSWER_BYTES, sent.signal, { abortable });
	if ('data' in body) return { ok: true, value: { ...raw, body: body.data } };
	sent.abort?.();
	if ('tooLarge' in body) {
		const { statusCode, headers } = raw;
		const contentType =
			typeof headers?.['content-type'] === 'string' ? headers['content-type'] : '';
		const size = { maxBytes: MAX_ANSWER_BYTES, announced: body.announced };
		return { ok: false, failure: answerTooLarge(call, { statusCode, contentType, ...size }) };
	}
	if (sent.deadline.aborted) return { ok: false, failure: deadlineFailure(call, timeoutMs) };
	if (sent.signal.aborted) return { ok: false, failure: cancelledFailure(call) };
	return { ok: false, failure: noAnswerFailure(body.error, call, { safeToRepeat: false }) };
}
