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
import { shownUrl } from '../helpers/shownUrl';
import { receiveAnswer } from './body';
import {
	isFetchable,
	notAPdf,
	type PdfDownload,
	type PdfFile,
	receiveFile,
	unusableUrl,
} from './download';
import { Deadlines } from './deadlines';
import { interpretResponse, type RawResponse, type Sent } from './envelope';
import { httpFailure, unexpectedAnswer } from './answerFailures';
import {
	type Attempt,
	type CallContext,
	cancelledFailure,
	createdButNoPdf,
	deadlineFailure,
	type Failure,
	heldPastRetryWait,
} from './errors';
import { findErrorCode, noAnswerFailure } from './networkFailures';
import { credentialProblem, type FailedItem, nodeApiError } from './nodeError';
import { RunLog } from './runLog';
import { backoffMs, serviceIdentity, servicePace } from './pace';

export const CREDENTIAL_TYPE = 'invoiceServiceApi';

/**
 * The shortest wait before a retry, whatever the service says: a `Retry-After` of 0, one in the past, or none
 * at all still waits this long (the back-off's first step is 0.5 to 1 s), and the wait counts against Max
 * Retry Wait, so a budget of 0 sends once and any budget runs out.
 */
export const MIN_RETRY_WAIT_MS = 1000;
/** The most sends of one request, first one included, however short the waits the service asks for. */
export const MAX_SENDS = 12;
/**
 * No try of a request starts later than Max Retry Wait + this after its first try was queued, whatever the tries
 * themselves took: a create is over Timeout later, before any other delivery of its Idempotency Key gives up waiting
 * for it (Max Retry Wait + Timeout + 30 s after the claim, which is at most 11 s before the first try: claims ahead
 * are given back after 10 s, docs/how-it-works.md).
 */
export const LAST_TRY_AFTER_MS = 15_000;

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

/**
 * The one door to the service: base URL from the credential, Bearer auth through n8n's credential injection,
 * time-out, retries only where the service surely did not act, the Bubble envelope, and error mapping.
 * Nothing above this module knows about HTTP status codes.
 */
export class ServiceClient {
	/**
	 * Set by the first failure of a service call that no later item can escape (the key refused, the host not
	 * found, its certificate refused): from then on nothing more is sent in this run, and each item gets this.
	 */
	private laterItems: Failure | undefined;
	private readonly deadlines: Deadlines;
	/** The context the helper is called on for the latest signal (see `authenticated`). */
	private view: { signal: AbortSignal; context: IExecuteFunctions } | undefined;

	private constructor(
		private readonly context: IExecuteFunctions,
		readonly baseUrl: string,
		private readonly options: ClientOptions,
		private readonly credentials: ICredentialDataDecryptedObject,
		/** This service and key as the process-wide pace knows them (no key in clear). */
		private readonly service: string,
		readonly log: RunLog,
	) {
		this.deadlines = new Deadlines(options.timeoutMs);
	}

	/** Reads and checks the credential; throws (before anything is sent) when it cannot be used. */
	static async create(context: IExecuteFunctions, options: ClientOptions): Promise<ServiceClient> {
		const credentials = await context.getCredentials(CREDENTIAL_TYPE);
		const reading = resolveBaseUrl(String(credentials.baseUrl ?? ''), {
			allowHttp: credentials.allowHttp === true,
		});
		if ('problem' in reading) {
			throw credentialProblem(context.getNode(), reading.problem, 'Correct the Base URL');
		}
		const key = readApiKey(credentials.apiKey);
		if ('problem' in key) {
			throw credentialProblem(context.getNode(), key.problem, 'Correct the API Key');
		}
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
		const call: CallContext = { endpoint, url: shownUrl(url), conflictMessage };
		const request: IHttpRequestOptions = {
			method: 'POST',
			url,
			body,
			json: true,
			// As a stream, read here with a limit (body.ts): no answer of any size is held whole first.
			encoding: 'stream',
			timeout: this.deadlines.helperTimeoutMs,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			// A redirect is an answer here, never followed (answerFailures.ts `redirectFailure`).
			disableFollowRedirect: true,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		return await this.withRetries(call, { itemIndex, serviceCall: true }, async () => {
			const sent = await this.send(request, {
				itemIndex,
				withKey: true,
				createsRecord: true,
				streamed: false,
			});
			if ('error' in sent) {
				// Cut by the deadline or a Stop, or broken after it reached the service: it may have acted, so it is
				// never sent again. Only a request that surely never arrived, and may yet (a refused connection, a
				// DNS failure that may pass), is retried.
				const failure = sent.cancelled
					? cancelledFailure(call)
					: sent.deadlineHit
						? deadlineFailure(call, this.options.timeoutMs)
						: noAnswerFailure(sent.error, call, { safeToRepeat: false });
				return { ok: false, failure };
			}
			const timeoutMs = this.options.timeoutMs;
			const received = await receiveAnswer(sent, { call, timeoutMs });
			if (!received.ok) return received;
			const outcome = interpretResponse(received.value);
			if (!outcome.ok) return { ok: false, failure: httpFailure(outcome, call) };
			if (outcome.data[requiredField] === undefined || outcome.data[requiredField] === null) {
				return { ok: false, failure: unexpectedAnswer(outcome.data, requiredField, call) };
			}
			return { ok: true, value: outcome.data };
		});
	}

	/**
	 * Downloads the PDF of an invoice that was just created (download.ts reads and checks the file). The API key
	 * goes only to the service's own origin: a download URL on any other host (a CDN, a storage bucket) is fetched
	 * without it. Every failure says that the invoice exists, formatted once here, with the HTTP code kept.
	 */
	async downloadPdf({ invoiceId, url, itemIndex, maxBytes }: PdfDownload): Promise<PdfFile> {
		const call: CallContext = { endpoint: 'the PDF download', url: shownUrl(String(url)) };
		const asCreated = (failure: Failure) => createdButNoPdf(failure, invoiceId);
		if (!isFetchable(url)) throw this.toError(asCreated(unusableUrl(url)), { itemIndex });
		const request: IHttpRequestOptions = {
			method: 'GET',
			url,
			encoding: 'stream',
			timeout: this.deadlines.helperTimeoutMs,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		const sameOrigin = originOf(url) === originOf(this.baseUrl);
		const limits = { call, maxBytes, timeoutMs: this.options.timeoutMs };
		// Not paced with the service's calls: a rate limit counts the workflow calls, and the file often comes
		// from another host (a CDN) anyway.
		const retries = { itemIndex, serviceCall: false, finalize: asCreated };
		const file = await this.withRetries(call, retries, async () => {
			const sent = await this.send(request, {
				itemIndex,
				withKey: sameOrigin,
				createsRecord: false,
				streamed: true,
			});
			return await receiveFile(sent, limits);
		});
		const wrong = notAPdf(file, call.url);
		if (wrong) throw this.toError(asCreated(wrong), { itemIndex });
		return file;
	}

	/**
	 * Sends one request with a total deadline. n8n's request helpers only offer an idle time-out, which a
	 * trickling answer never trips, so the deadline is an AbortSignal (its timer is Node's own, unref'd, and
	 * needs no clearing), shared by the requests that start together (deadlines.ts). The signal also follows the
	 * execution's own cancel signal, so stopping the workflow still stops the request. A streamed request has a
	 * signal of its own besides, and `abort()` lets the caller give up on its body; the helper keeps the signal
	 * attached while a streamed body is read, and an abort destroys the socket: nothing is left running.
	 *
	 * A Stop (or the workflow's time-out) before the request leaves sends nothing, and says so. One that comes
	 * while a create is under way may have come after the service received it: an unknown outcome, never "not
	 * sent" (n8n's helper gives no sign of whether the request's bytes had left).
	 */
	private async send(
		request: IHttpRequestOptions,
		{
			itemIndex,
			withKey,
			createsRecord,
			streamed,
		}: { itemIndex: number; withKey: boolean; createsRecord: boolean; streamed: boolean },
	): Promise<Sent> {
		const cancel = this.context.getExecutionCancelSignal?.();
		if (cancel?.aborted) throw this.stoppedBeforeSending(itemIndex);
		const shared = this.deadlines.next(cancel);
		const { deadline } = shared;
		const stop = streamed ? new AbortController() : undefined;
		const signal = stop ? AbortSignal.any([shared.signal, stop.signal]) : shared.signal;
		const abort = stop ? () => stop.abort() : undefined;
		this.log.sent(itemIndex);
		try {
			const raw = withKey
				? await this.authenticated({ ...request, abortSignal: signal }, signal)
				: ((await this.context.helpers.httpRequest({
						...request,
						abortSignal: signal,
					})) as RawResponse);
			return { raw, deadline, signal, ...(abort ? { abort } : {}) };
		} catch (error) {
			if (deadline.aborted) return { error, deadlineHit: true };
			if (createsRecord && cancel?.aborted) return { error, deadlineHit: false, cancelled: true };
			rethrowIfCancelled(error);
			return { error, deadlineHit: false };
		}
	}

	/** The execution was stopped before this item's request left: certainly not sent. */
	private stoppedBeforeSending(itemIndex: number): NodeApiError {
		const message = 'The execution was stopped before this item was sent: nothing was sent for it.';
		return new NodeApiError(this.context.getNode(), { message } as JsonObject, {
			message,
			description: 'Run the item again to send it.',
			itemIndex,
		});
	}

	/**
	 * A request with n8n's credential injection (the credential's `authenticate` sets the Bearer header). The
	 * credential was read once for the run; handing it over saves n8n decrypting it again for every item.
	 *
	 * The helper replaces the request's `abortSignal` with the execution's cancel signal (n8n 1.x and 2.x alike:
	 * `requestOptions.abortSignal = this.getExecutionCancelSignal()`), so it is called on a view of the context
	 * whose cancel signal is `signal`: the execution's own, joined with the deadline (one view per signal, which
	 * the requests that start together share).
	 */
	private async authenticated(
		request: IHttpRequestOptions,
		signal: AbortSignal,
	): Promise<RawResponse> {
		if (this.view?.signal !== signal) {
			const context = Object.create(this.context, {
				getExecutionCancelSignal: { value: () => signal },
			}) as IExecuteFunctions;
			this.view = { signal, context };
		}
		return (await this.context.helpers.httpRequestWithAuthentication.call(
			this.view.context,
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
	 */
	private async withRetries<T>(
		call: CallContext,
		{ itemIndex, serviceCall, finalize = (failure) => failure }: Retries,
		attempt: () => Promise<Attempt<T>>,
	): Promise<T> {
		let waitedMs = 0;
		// Waits count against Max Retry Wait; the tries and the pace too, against this bound (LAST_TRY_AFTER_MS).
		const lastTryBy = performance.now() + this.options.maxRetryWaitMs + LAST_TRY_AFTER_MS;
		let last: Failure | undefined;
		for (let attemptNo = 0; ; attemptNo++) {
			if (this.laterItems) throw this.notSent(this.laterItems, itemIndex, finalize);
			const queuedAt = Date.now();
			const turn = serviceCall ? await servicePace.turn(this.service) : undefined;
			// Only a request that waited in the queue was held back: one let go at once may still see the clock tick.
			if (turn?.queued) this.log.heldBack(turn.at - queuedAt);
			// Another item may have met such a failure while this one waited for its turn.
			if (this.laterItems) throw this.notSent(this.laterItems, itemIndex, finalize);
			if (performance.now() > lastTryBy) {
				const { maxRetryWaitMs } = this.options;
				const failure = last ?? heldPastRetryWait(maxRetryWaitMs);
				const gaveUp = last ? { waitedMs, maxRetryWaitMs } : undefined;
				throw this.toError(finalize(failure), { itemIndex, gaveUp });
			}
			const outcome = await attempt();
			const slowDown = !outcome.ok && outcome.failure.slowDown === true;
			if (serviceCall && !slowDown && (outcome.ok || outcome.failure.httpCode !== undefined)) {
				servicePace.accepted(this.service);
			}
			if (outcome.ok) return outcome.value;
			const result = outcome.failure;
			last = result;
			// Only the service's own calls speak for the rest of the run: a 401 or a missing host of a file host
			// (the PDF's) says nothing about the service.
			if (serviceCall && result.laterItems) this.laterItems ??= result.laterItems;

			const delayMs = Math.max(result.retryAfterMs ?? backoffMs(attemptNo), MIN_RETRY_WAIT_MS);
			// A service that says "slow down" means it for everybody using this key, not just this request, and
			// whether or not this item still has the time to wait for it.
			const shared = turn !== undefined && slowDown;
			if (shared) {
				const rateLimited = result.httpCode === 429;
				servicePace.refused(this.service, turn, { waitMs: delayMs, rateLimited });
			}
			const outOfTime =
				waitedMs + delayMs > this.options.maxRetryWaitMs || performance.now() + delayMs > lastTryBy;
			const outOfSends = !outOfTime && attemptNo + 1 >= MAX_SENDS;
			if (!result.retryable || outOfTime || outOfSends) {
				if (result.retryable) this.log.gaveUp(itemIndex, call.endpoint, result, waitedMs);
				const { maxRetryWaitMs } = this.options;
				const sends = outOfSends ? { sends: MAX_SENDS } : {};
				const gaveUp = result.retryable ? { waitedMs, maxRetryWaitMs, ...sends } : undefined;
				throw this.toError(finalize(result), { itemIndex, gaveUp });
			}
			this.log.waiting(itemIndex, call.endpoint, result, { delayMs, shared });
			if (!shared) await sleep(delayMs);
			waitedMs += delayMs;
		}
	}

	private notSent(
		laterItems: Failure,
		itemIndex: number,
		finalize: (failure: Failure) => Failure,
	): NodeApiError {
		this.log.notSentAfter(laterItems);
		return this.toError(finalize(laterItems), { itemIndex });
	}

	private toError(failure: Failure, item: FailedItem): NodeApiError {
		return nodeApiError(this.context.getNode(), failure, item);
	}
}

/** How `withRetries` treats one item's call. */
interface Retries {
	itemIndex: number;
	/**
	 * A call to the service's workflow API, not a file host: it takes its turn in the process-wide pace of this
	 * service and key first, a "slow down" answer to it pauses everybody who uses them, and after a 401 to it
	 * nothing more is sent in this run.
	 */
	serviceCall: boolean;
	/** Gives the final failure its last words (e.g. "the invoice was created, but..."). */
	finalize?: (failure: Failure) => Failure;
}

function originOf(url: string): string {
	try {
		return new URL(url).origin;
	} catch {
		return '';
	}
}

/** A user stopping the execution is not a service failure: let n8n handle it. */
function rethrowIfCancelled(error: unknown): void {
	if (findErrorCode(error) === 'ERR_CANCELED') throw error;
}
