import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, sleep } from 'n8n-workflow';

import { readApiKey } from '../helpers/apiKey';
import { resolveBaseUrl } from '../helpers/baseUrl';
import { interpretResponse, type RawResponse } from './envelope';
import {
	type CallContext,
	createdButNoPdf,
	deadlineFailure,
	downloadDeadlineFailure,
	type Failure,
	fileTooLarge,
	findErrorCode,
	httpFailure,
	keyRefusedEarlier,
	networkFailure,
	ssrfRefusal,
	unexpectedAnswer,
} from './errors';
import { RunLog } from './runLog';
import { backoffMs, serviceIdentity, servicePace } from './pace';

export const CREDENTIAL_TYPE = 'invoiceServiceApi';

export interface ClientOptions {
	/** Total deadline of one request in milliseconds: connection, headers and the whole body. */
	timeoutMs: number;
	/** How long one item may spend waiting for retries (rate limits, unavailable service) before it fails. */
	maxRetryWaitMs: number;
}

export interface PostOptions {
	itemIndex: number;
	/** A field a success answer must carry (e.g. "id"); without it the answer is not trusted. */
	requiredField: string;
	/** The message a 409 should carry for this call. */
	conflictMessage?: string;
}

export interface PdfDownload {
	/** The invoice that was created: every failure of the download says it exists. */
	invoiceId: string;
	/** The invoice's download_url, as the service gave it (checked here). */
	url: unknown;
	itemIndex: number;
	/** A larger file is refused at this many bytes, without reading the rest. */
	maxBytes: number;
}

/**
 * The one door to the service: base URL from the credential, Bearer auth through n8n's credential injection,
 * time-out, retries only where the service surely did not act, the Bubble envelope, and error mapping.
 * Nothing above this module knows about HTTP status codes.
 */
export class ServiceClient {
	/** Set by the first 401 of the run: from then on nothing more is sent with this key. */
	private keyRefused = false;

	private constructor(
		private readonly context: IExecuteFunctions,
		readonly baseUrl: string,
		private readonly options: ClientOptions,
		private readonly credentials: ICredentialDataDecryptedObject,
		/** This service and key as the process-wide pace knows them (no key in clear). */
		private readonly service: string,
		readonly log: RunLog,
	) {}

	/** Reads and checks the credential; throws (before anything is sent) when it cannot be used. */
	static async create(context: IExecuteFunctions, options: ClientOptions): Promise<ServiceClient> {
		const credentials = await context.getCredentials(CREDENTIAL_TYPE);
		const reading = resolveBaseUrl(
			String(credentials.baseUrl ?? ''),
			credentials.allowHttp === true,
		);
		if ('problem' in reading) {
			throw credentialProblem(context, reading.problem, 'Correct the Base URL');
		}
		const key = readApiKey(credentials.apiKey);
		if ('problem' in key) throw credentialProblem(context, key.problem, 'Correct the API Key');
		const log = new RunLog(context.logger, context.getNode().name);
		const service = serviceIdentity(originOf(reading.url), key.key);
		return new ServiceClient(context, reading.url, options, credentials, service, log);
	}

	/** POSTs a JSON body to an endpoint (e.g. "create-customer") and returns the unwrapped record. */
	async post(
		endpoint: string,
		body: IDataObject,
		{ itemIndex, requiredField, conflictMessage }: PostOptions,
	): Promise<IDataObject> {
		const url = `${this.baseUrl}/${endpoint}`;
		const call: CallContext = { endpoint, url, conflictMessage };
		const request: IHttpRequestOptions = {
			method: 'POST',
			url,
			body,
			json: true,
			timeout: this.options.timeoutMs,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		return await this.withRetries(call, itemIndex, true, async () => {
			const sent = await this.send(request, itemIndex, true);
			if ('error' in sent) {
				// Cut by the deadline, or broken after it reached the service: it may have acted, so it is never sent
				// again. Only a request that surely never arrived (refused, no such host) is retried.
				const failure = sent.deadlineHit
					? deadlineFailure(call, this.options.timeoutMs)
					: noAnswerFailure(sent.error, call, false);
				return { ok: false, failure };
			}
			const outcome = interpretResponse(sent.raw);
			if (!outcome.ok) return { ok: false, failure: httpFailure(outcome, call) };
			if (outcome.data[requiredField] === undefined || outcome.data[requiredField] === null) {
				return { ok: false, failure: unexpectedAnswer(outcome.data, requiredField, call) };
			}
			return { ok: true, value: outcome.data };
		});
	}

	/**
	 * Downloads the PDF of an invoice that was just created. The API key goes only to the service's own origin:
	 * a download URL on any other host (a CDN, a storage bucket) is fetched without it. GET is safe to repeat,
	 * so a connection that broke is retried; a file cut by the deadline or over the size limit is not. Every
	 * failure says that the invoice exists, formatted once here, with the HTTP code kept.
	 */
	async downloadPdf({
		invoiceId,
		url,
		itemIndex,
		maxBytes,
	}: PdfDownload): Promise<{ data: Buffer; contentType?: string }> {
		const call: CallContext = { endpoint: 'the PDF download', url: String(url) };
		const asCreated = (failure: Failure) => createdButNoPdf(failure, invoiceId);
		if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) {
			const given = JSON.stringify(url ?? null);
			const message = `the service gave no usable download_url (got ${given})`;
			throw this.toError(asCreated({ retryable: false, message }), itemIndex);
		}
		const request: IHttpRequestOptions = {
			method: 'GET',
			url,
			encoding: 'stream',
			timeout: this.options.timeoutMs,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		const sameOrigin = originOf(url) === originOf(this.baseUrl);
		// Not paced with the service's calls: a rate limit counts the workflow calls, and the file often comes
		// from another host (a CDN) anyway.
		const file = await this.withRetries(
			call,
			itemIndex,
			false,
			async () => {
				const sent = await this.send(request, itemIndex, sameOrigin);
				if ('error' in sent) {
					if (sent.deadlineHit) {
						return { ok: false, failure: downloadDeadlineFailure(this.options.timeoutMs) };
					}
					return { ok: false, failure: noAnswerFailure(sent.error, call, true) };
				}
				const { raw } = sent;
				if (raw.statusCode < 200 || raw.statusCode > 299) {
					sent.abort();
					discard(raw.body);
					const failure = httpFailure({ httpCode: raw.statusCode, bodyKind: 'binary' }, call);
					// Only "slow down" answers keep their meaning for a file; anything else is just the file missing.
					if (failure.retryable) return { ok: false, failure };
					const message = `${url} answered HTTP ${raw.statusCode}`;
					return { ok: false, failure: { httpCode: raw.statusCode, retryable: false, message } };
				}
				const body = await readAtMost(raw, maxBytes, sent.signal);
				// Refused or broken: abort the request itself, which closes the socket (destroying the body
				// stream alone leaves it open when the helper hands over a wrapper stream).
				if (!('data' in body)) sent.abort();
				if ('tooLarge' in body) {
					return { ok: false, failure: fileTooLarge(maxBytes, body.announced) };
				}
				if ('error' in body) {
					if (sent.deadline.aborted) {
						return { ok: false, failure: downloadDeadlineFailure(this.options.timeoutMs) };
					}
					// The execution was stopped while the file came in: not a service failure.
					if (sent.signal.aborted) throw body.error;
					return { ok: false, failure: noAnswerFailure(body.error, call, true) };
				}
				const contentType = raw.headers?.['content-type'];
				return {
					ok: true,
					value: { data: body.data, ...(typeof contentType === 'string' ? { contentType } : {}) },
				};
			},
			asCreated,
		);
		if (file.data.subarray(0, 5).toString('latin1') !== '%PDF-') {
			const message = `what came back from ${url} is not a PDF (content type ${file.contentType ?? 'unknown'}, ${file.data.length} bytes)`;
			throw this.toError(asCreated({ retryable: false, message }), itemIndex);
		}
		return file;
	}

	/**
	 * Sends one request with a total deadline. n8n's request helpers only offer an idle time-out, which a
	 * trickling answer never trips, so the deadline is an AbortSignal (its timer is Node's own, unref'd, and
	 * needs no clearing). The signal also follows the execution's own cancel signal, so stopping the workflow
	 * still stops the request, and `abort()` lets the caller give up on a streamed body. The helper keeps the
	 * signal attached while a streamed body is read, and an abort destroys the socket: nothing is left running.
	 */
	private async send(
		request: IHttpRequestOptions,
		itemIndex: number,
		withKey: boolean,
	): Promise<
		| { raw: RawResponse; deadline: AbortSignal; signal: AbortSignal; abort: () => void }
		| { error: unknown; deadlineHit: boolean }
	> {
		const deadline = AbortSignal.timeout(this.options.timeoutMs);
		const stop = new AbortController();
		const cancel = this.context.getExecutionCancelSignal?.();
		const signal = AbortSignal.any([deadline, stop.signal, ...(cancel ? [cancel] : [])]);
		this.log.sent(itemIndex);
		try {
			const raw = withKey
				? await this.authenticated({ ...request, abortSignal: signal }, signal)
				: ((await this.context.helpers.httpRequest({
						...request,
						abortSignal: signal,
					})) as RawResponse);
			return { raw, deadline, signal, abort: () => stop.abort() };
		} catch (error) {
			if (deadline.aborted) return { error, deadlineHit: true };
			rethrowIfCancelled(error);
			return { error, deadlineHit: false };
		}
	}

	/**
	 * A request with n8n's credential injection (the credential's `authenticate` sets the Bearer header). The
	 * credential was read once for the run; handing it over saves n8n decrypting it again for every item.
	 *
	 * The helper replaces the request's `abortSignal` with the execution's cancel signal (n8n 1.x and 2.x alike:
	 * `requestOptions.abortSignal = this.getExecutionCancelSignal()`), so it is called on a view of the context
	 * whose cancel signal is `signal`: the execution's own, joined with the deadline.
	 */
	private async authenticated(
		request: IHttpRequestOptions,
		signal: AbortSignal,
	): Promise<RawResponse> {
		const context = Object.create(this.context, {
			getExecutionCancelSignal: { value: () => signal },
		}) as IExecuteFunctions;
		return (await this.context.helpers.httpRequestWithAuthentication.call(
			context,
			CREDENTIAL_TYPE,
			request,
			{
				credentialsDecrypted: {
					id: '',
					name: CREDENTIAL_TYPE,
					type: CREDENTIAL_TYPE,
					data: this.credentials,
				},
			},
		)) as RawResponse;
	}

	/**
	 * Runs one attempt after another until it succeeds, fails for good, or the item's wait budget is spent.
	 * A `serviceCall` (to the service's workflow API, not a file host) takes its turn in the process-wide pace of
	 * this service and key first, a "slow down" answer to it pauses everybody who uses them, and after a 401 to it
	 * nothing more is sent in this run.
	 * `finalize` gives the final failure its last words (e.g. "the invoice was created, but...").
	 */
	private async withRetries<T>(
		call: CallContext,
		itemIndex: number,
		serviceCall: boolean,
		attempt: () => Promise<Attempt<T>>,
		finalize: (failure: Failure) => Failure = (failure) => failure,
	): Promise<T> {
		let waitedMs = 0;
		for (let attemptNo = 0; ; attemptNo++) {
			if (this.keyRefused) throw this.notSentKeyRefused(itemIndex, finalize);
			const queuedAt = Date.now();
			const turn = serviceCall ? await servicePace.turn(this.service) : undefined;
			if (turn && turn.at > queuedAt) this.log.heldBack(turn.at - queuedAt);
			// The key may have been refused to another item while this one waited for its turn.
			if (this.keyRefused) throw this.notSentKeyRefused(itemIndex, finalize);
			const outcome = await attempt();
			// Only "slow down" answers (429, 503) are retryable and carry an HTTP code.
			const slowDown =
				!outcome.ok && outcome.failure.retryable && outcome.failure.httpCode !== undefined;
			if (serviceCall && !slowDown && (outcome.ok || outcome.failure.httpCode !== undefined)) {
				servicePace.accepted(this.service);
			}
			if (outcome.ok) return outcome.value;
			const result = outcome.failure;
			// A 401 from the service's workflow API is about the key; one from a file host is not.
			if (serviceCall && result.httpCode === 401) this.keyRefused = true;

			const delayMs = result.retryAfterMs ?? backoffMs(attemptNo);
			// A service that says "slow down" means it for everybody using this key, not just this request, and
			// whether or not this item still has the time to wait for it.
			const shared = turn !== undefined && slowDown;
			if (shared) servicePace.refused(this.service, turn, delayMs, result.httpCode === 429);
			if (!result.retryable || waitedMs + delayMs > this.options.maxRetryWaitMs) {
				if (result.retryable) this.log.gaveUp(itemIndex, call.endpoint, result, waitedMs);
				throw this.toError(finalize(result), itemIndex, result.retryable ? waitedMs : undefined);
			}
			this.log.waiting(itemIndex, call.endpoint, result, delayMs, shared);
			if (!shared) await sleep(delayMs);
			waitedMs += delayMs;
		}
	}

	private notSentKeyRefused(
		itemIndex: number,
		finalize: (failure: Failure) => Failure,
	): NodeApiError {
		this.log.keyRefusedNotSent();
		return this.toError(finalize(keyRefusedEarlier()), itemIndex);
	}

	private toError(failure: Failure, itemIndex: number, waitedMs?: number): NodeApiError {
		const gaveUp =
			waitedMs !== undefined
				? ` Retried for ${Math.round(waitedMs / 1000)} s (Max Retry Wait: ${Math.round(this.options.maxRetryWaitMs / 1000)} s), then gave up.`
				: '';
		const retryAfter =
			failure.retryAfterMs !== undefined
				? ` The service asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s.`
				: '';
		const description = `${failure.description ?? ''}${retryAfter}${gaveUp}`.trim();
		// A plain object, never the request error itself: that one carries the request's headers.
		const safeResponse: JsonObject = {
			message: failure.message,
			...(failure.httpCode ? { httpCode: failure.httpCode } : {}),
		};
		const error = new NodeApiError(this.context.getNode(), safeResponse, {
			message: failure.message,
			...(description ? { description } : {}),
			...(failure.httpCode ? { httpCode: String(failure.httpCode) } : {}),
			itemIndex,
		});
		if (failure.serviceMayHaveActed) serviceMayHaveActed.add(error);
		return error;
	}
}

/** Errors of requests the service acted on, or may have: sending them again could create a duplicate. */
const serviceMayHaveActed = new WeakSet<Error>();

/** Whether the item's request was (or may have been) carried out by the service although the item failed. */
export function mayHaveActed(error: unknown): boolean {
	return error instanceof Error && serviceMayHaveActed.has(error);
}

/** A credential that cannot be used: found before anything is sent. */
function credentialProblem(context: IExecuteFunctions, problem: string, fix: string): NodeApiError {
	return new NodeApiError(context.getNode(), { message: problem } as JsonObject, {
		message: problem,
		description: `Nothing was sent. ${fix} in the Invoice Service API credential.`,
	});
}

type Attempt<T> = { ok: true; value: T } | { ok: false; failure: Failure };

function originOf(url: string): string {
	try {
		return new URL(url).origin;
	} catch {
		return '';
	}
}

/** A request that got no (whole) HTTP answer. A GET is safe to send again whatever broke; a POST may not be. */
function noAnswerFailure(error: unknown, call: CallContext, safeToRepeat: boolean): Failure {
	const refused = ssrfRefusal(error, call);
	if (refused) return refused;
	const message = error instanceof Error ? error.message : String(error);
	const failure = networkFailure(findErrorCode(error), message, call);
	return safeToRepeat ? { ...failure, retryable: true } : failure;
}

type Body = { data: Buffer } | { tooLarge: true; announced?: number } | { error: unknown };

/**
 * Reads a streamed body into memory, but never more than `maxBytes`: a Content-Length over the limit is
 * refused before the first byte, and a body that grows past it (no length, or a false one) is stopped there.
 * Either way the stream is destroyed, which closes the socket. An abort of `signal` (the deadline) does the same.
 */
async function readAtMost(raw: RawResponse, maxBytes: number, signal: AbortSignal): Promise<Body> {
	const { body } = raw;
	if (Buffer.isBuffer(body)) return body.length > maxBytes ? { tooLarge: true } : { data: body };
	const stream = body as NodeJS.ReadableStream & { destroy(error?: Error): void };
	const announced = Number(raw.headers?.['content-length']);
	if (Number.isFinite(announced) && announced > maxBytes) {
		stream.destroy();
		return { tooLarge: true, announced };
	}
	const stop = () => stream.destroy(new Error('The request was cut off by the deadline'));
	if (signal.aborted) stop();
	signal.addEventListener('abort', stop, { once: true });
	const chunks: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
			size += bytes.length;
			if (size > maxBytes) {
				stream.destroy();
				return { tooLarge: true };
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
function discard(body: unknown): void {
	const stream = body as { destroy?: () => void } | undefined;
	if (typeof stream?.destroy === 'function') stream.destroy();
}

/** A user stopping the execution is not a service failure: let n8n handle it. */
function rethrowIfCancelled(error: unknown): void {
	if (findErrorCode(error) === 'ERR_CANCELED') throw error;
}
