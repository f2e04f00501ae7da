import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, sleep } from 'n8n-workflow';

import { checkBaseUrl, normalizeBaseUrl } from '../helpers/baseUrl';
import { interpretResponse, type RawResponse } from './envelope';
import {
	type CallContext,
	type Failure,
	findErrorCode,
	httpFailure,
	networkFailure,
	unexpectedAnswer,
} from './errors';
import { backoffMs, Throttle } from './throttle';

export const CREDENTIAL_TYPE = 'invoiceServiceApi';

export interface ClientOptions {
	/** Per-request time-out in milliseconds. */
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
	private readonly throttle = new Throttle();

	private constructor(
		private readonly context: IExecuteFunctions,
		readonly baseUrl: string,
		private readonly options: ClientOptions,
		private readonly credentials: ICredentialDataDecryptedObject,
	) {}

	static async create(context: IExecuteFunctions, options: ClientOptions): Promise<ServiceClient> {
		const credentials = await context.getCredentials(CREDENTIAL_TYPE);
		const baseUrl = normalizeBaseUrl(String(credentials.baseUrl ?? ''));
		const problem = checkBaseUrl(baseUrl, credentials.allowHttp === true);
		if (problem) {
			throw new NodeApiError(context.getNode(), { message: problem } as JsonObject, {
				message: problem,
			});
		}
		return new ServiceClient(context, baseUrl, options, credentials);
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
		return await this.withRetries(call, itemIndex, async () => {
			let raw: RawResponse;
			try {
				raw = await this.authenticated(request);
			} catch (error) {
				rethrowIfCancelled(error);
				return { ok: false, failure: networkFailure(findErrorCode(error), messageOf(error), call) };
			}
			const outcome = interpretResponse(raw);
			if (!outcome.ok) return { ok: false, failure: httpFailure(outcome, call) };
			if (outcome.data[requiredField] === undefined || outcome.data[requiredField] === null) {
				return { ok: false, failure: unexpectedAnswer(outcome.data, requiredField, call) };
			}
			return { ok: true, value: outcome.data };
		});
	}

	/**
	 * Downloads a file (the invoice PDF). The API key goes only to the service's own origin: a download URL on
	 * any other host (a CDN, a storage bucket) is fetched without it. GET is safe to repeat, so here a broken
	 * connection is retried too.
	 */
	async download(url: string, itemIndex: number): Promise<{ data: Buffer; contentType?: string }> {
		const call: CallContext = { endpoint: 'the PDF download', url };
		const request: IHttpRequestOptions = {
			method: 'GET',
			url,
			encoding: 'arraybuffer',
			timeout: this.options.timeoutMs,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		const sameOrigin = originOf(url) === originOf(this.baseUrl);
		return await this.withRetries(call, itemIndex, async () => {
			let raw: RawResponse;
			try {
				raw = sameOrigin
					? await this.authenticated(request)
					: ((await this.context.helpers.httpRequest({ ...request })) as RawResponse);
			} catch (error) {
				rethrowIfCancelled(error);
				return {
					ok: false,
					failure: {
						...networkFailure(findErrorCode(error), messageOf(error), call),
						retryable: true,
					},
				};
			}
			if (raw.statusCode < 200 || raw.statusCode > 299) {
				const failure = httpFailure({ httpCode: raw.statusCode, bodyKind: 'binary' }, call);
				// Only "slow down" answers keep their meaning for a file; anything else is just the file missing.
				if (failure.retryable) return { ok: false, failure };
				const message = `${url} answered HTTP ${raw.statusCode}`;
				return { ok: false, failure: { httpCode: raw.statusCode, retryable: false, message } };
			}
			const data = Buffer.isBuffer(raw.body) ? raw.body : Buffer.from(raw.body as ArrayBuffer);
			const contentType = raw.headers?.['content-type'];
			return {
				ok: true,
				value: { data, ...(typeof contentType === 'string' ? { contentType } : {}) },
			};
		});
	}

	/**
	 * A request with n8n's credential injection (the credential's generic Bearer block). The credential was read
	 * once for the run; handing it over saves n8n decrypting it again for every item.
	 */
	private async authenticated(request: IHttpRequestOptions): Promise<RawResponse> {
		return (await this.context.helpers.httpRequestWithAuthentication.call(
			this.context,
			CREDENTIAL_TYPE,
			{ ...request },
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

	/** Runs one attempt after another until it succeeds, fails for good, or the item's wait budget is spent. */
	private async withRetries<T>(
		call: CallContext,
		itemIndex: number,
		attempt: () => Promise<Attempt<T>>,
	): Promise<T> {
		let waitedMs = 0;
		for (let attemptNo = 0; ; attemptNo++) {
			await this.throttle.ready();
			const outcome = await attempt();
			if (outcome.ok) return outcome.value;
			const result = outcome.failure;

			const delayMs = result.retryAfterMs ?? backoffMs(attemptNo);
			if (!result.retryable || waitedMs + delayMs > this.options.maxRetryWaitMs) {
				throw this.toError(result, itemIndex, result.retryable ? waitedMs : undefined);
			}
			// A service that says "slow down" means it for every worker of this run, not just this one.
			if (result.httpCode === 429 || result.httpCode === 503) this.throttle.pause(delayMs);
			else await sleep(delayMs);
			waitedMs += delayMs;
		}
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
		return new NodeApiError(this.context.getNode(), safeResponse, {
			message: failure.message,
			...(description ? { description } : {}),
			...(failure.httpCode ? { httpCode: String(failure.httpCode) } : {}),
			itemIndex,
		});
	}
}

type Attempt<T> = { ok: true; value: T } | { ok: false; failure: Failure };

function originOf(url: string): string {
	try {
		return new URL(url).origin;
	} catch {
		return '';
	}
}

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** A user stopping the execution is not a service failure: let n8n handle it. */
function rethrowIfCancelled(error: unknown): void {
	if (findErrorCode(error) === 'ERR_CANCELED') throw error;
}
