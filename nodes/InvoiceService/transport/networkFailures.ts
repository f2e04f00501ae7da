/**
 * The failures of a request that got no HTTP answer, in words that say what really happened: whether it ever
 * left (refused, no such host, a certificate or handshake refused: nothing was sent) or broke on the way (the
 * service may have acted: outcome unknown). Read from the error's codes along its cause chain, and where n8n
 * 1.x rewrote the error into a sentence of its own and dropped the code, from the texts it kept.
 */
import { clip } from '../helpers/clip';
import {
	type CallContext,
	type Failure,
	MAX_QUOTED_CHARS,
	noAnswerInTime,
	safeHost,
	UNKNOWN_OUTCOME,
} from './errors';

// Codes that mean the connection never opened, so the request never reached the service: safe to send again.
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL']);
const TIMEOUT = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);

/** What a certificate the TLS handshake refused was wrong about, by Node's (OpenSSL's) code. */
type CertificateFault = 'untrusted' | 'expired' | 'not yet valid' | 'name' | 'revoked' | 'invalid';
const CERTIFICATE_FAULTS: Record<string, CertificateFault> = {
	DEPTH_ZERO_SELF_SIGNED_CERT: 'untrusted',
	SELF_SIGNED_CERT_IN_CHAIN: 'untrusted',
	UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted',
	UNABLE_TO_GET_ISSUER_CERT: 'untrusted',
	UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted',
	CERT_UNTRUSTED: 'untrusted',
	CERT_HAS_EXPIRED: 'expired',
	CERT_NOT_YET_VALID: 'not yet valid',
	ERR_TLS_CERT_ALTNAME_INVALID: 'name',
	HOSTNAME_MISMATCH: 'name',
	CERT_REVOKED: 'revoked',
	CERT_SIGNATURE_FAILURE: 'invalid',
	CERT_REJECTED: 'invalid',
	INVALID_CA: 'invalid',
};

/**
 * What n8n 1.x keeps of an error it rewrote (`NodeApiError` replaces the message with a sentence of its own, and
 * the code is not on the error it throws): the original text in `messages`, or only its sentence. Each pattern
 * gives back the code; Node's own texts first, then n8n 1.x's sentences (n8n-workflow `COMMON_ERRORS`).
 */
const CODE_TEXTS: Array<[RegExp, string]> = [
	[/\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|EADDRNOTAVAIL)\b/, '$1'],
	[/self[- ]signed certificate in certificate chain/i, 'SELF_SIGNED_CERT_IN_CHAIN'],
	[/self[- ]signed certificate/i, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
	[/unable to verify the first certificate/i, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
	[/unable to get (local )?issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
	[/certificate has expired/i, 'CERT_HAS_EXPIRED'],
	[/certificate is not yet valid/i, 'CERT_NOT_YET_VALID'],
	[/does not match certificate's altnames/i, 'ERR_TLS_CERT_ALTNAME_INVALID'],
	[/certificate revoked/i, 'CERT_REVOKED'],
	[/^The service refused the connection - perhaps it is offline/, 'ECONNREFUSED'],
	[
		/^The connection cannot be established, this usually occurs due to an incorrect host/,
		'ENOTFOUND',
	],
	[/^The DNS server returned an error, perhaps the server is offline/, 'EAI_AGAIN'],
	[/^The host is unreachable, perhaps the server is offline/, 'EHOSTUNREACH'],
	[/^The address is not available, ensure that you have the right IP address/, 'EADDRNOTAVAIL'],
];

/** An error's links along its cause chain (at most six), as far as they are objects. */
function chainOf(error: unknown): Array<Record<string, unknown>> {
	const chain: Array<Record<string, unknown>> = [];
	for (let current = error; typeof current === 'object' && current !== null && chain.length < 6; ) {
		chain.push(current as Record<string, unknown>);
		current = (current as { cause?: unknown }).cause;
	}
	return chain;
}

/** Whether a string is a code this module reads: a system or Node code, or a certificate's. */
function isKnownCode(code: unknown): code is string {
	return typeof code === 'string' && (/^E[A-Z_]+$|^ERR_/.test(code) || code in CERTIFICATE_FAULTS);
}

/**
 * The code of a request's failure (ECONNREFUSED, CERT_HAS_EXPIRED, ...): the first along the error's cause
 * chain, else the one its texts name (n8n 1.x's rewritten errors).
 */
export function findErrorCode(error: unknown): string | undefined {
	const chain = chainOf(error);
	const coded = chain.map((link) => link.code).find(isKnownCode);
	if (coded !== undefined) return coded;
	const texts = chain.flatMap((link) => [
		link.message,
		...(Array.isArray(link.messages) ? link.messages : []),
	]);
	for (const text of texts) {
		if (typeof text !== 'string') continue;
		for (const [pattern, code] of CODE_TEXTS) {
			const match = pattern.exec(text);
			if (match) return code.replace('$1', match[1] ?? '');
		}
	}
	return undefined;
}

/** What every later item of the run gets once a host turned out not to exist, or its certificate untrusted. */
function notSentAfter(first: Failure): Failure {
	return {
		retryable: false,
		message: `Not sent: ${first.message.charAt(0).toLowerCase()}${first.message.slice(1)}`,
		description:
			`Found on an earlier item of this run: after the first such failure the node sends nothing more to this host in the run, as every item would fail the same way. ${first.description ?? ''}`.trim(),
	};
}

/** A failure that ends sending for the run: the later items get `notSentAfter` it. */
function endingTheRun(failure: Failure): Failure {
	return { ...failure, laterItems: notSentAfter(failure) };
}

const TRUST_A_PRIVATE_CA =
	'If the service uses a certificate of a private CA (an internal one), trust that CA: set NODE_EXTRA_CA_CERTS to its PEM file in the environment n8n starts with (on every worker too, in queue mode), then restart n8n.';

/** A certificate the TLS handshake refused: nothing was sent, and sending again would only be refused again. */
function certificateFailure(code: string, fault: CertificateFault, host: string): Failure {
	const words: Record<CertificateFault, [string, string]> = {
		untrusted: [
			`is not from an authority this machine trusts (${code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ? 'it is self-signed' : 'its issuer is unknown here'})`,
			TRUST_A_PRIVATE_CA,
		],
		expired: [
			'has expired',
			"The service's certificate must be renewed by whoever runs it; until then nothing can be sent safely.",
		],
		'not yet valid': [
			'is not valid yet',
			"Check this machine's clock, or ask whoever runs the service about its certificate.",
		],
		name: [
			'is for another name',
			'Check the Base URL: use the host name the certificate is for (the one the service is published under), not an IP address or another alias.',
		],
		revoked: ['has been revoked', 'Ask whoever runs the service for a valid certificate.'],
		invalid: [
			'was refused',
			`Ask whoever runs the service about its certificate. ${TRUST_A_PRIVATE_CA}`,
		],
	};
	const [what, fix] = words[fault];
	return endingTheRun({
		retryable: false,
		message: `The certificate of ${host} ${what}`,
		description: `No secure connection was made, nothing was sent: the TLS certificate check failed (${code}) before any data was sent. ${fix}`,
	});
}

/** Failure for a request that got no HTTP answer, from its error's code and text. */
export function networkFailure(
	code: string | undefined,
	rawMessage: string,
	call: CallContext,
): Failure {
	const host = safeHost(call.url);
	if (code === 'ENOTFOUND') {
		return endingTheRun({
			retryable: false,
			message: `Cannot find the host ${safeHost(call.url, 'hostname')}: check the Base URL in the credential`,
			description: `The name does not exist (DNS answered ${code}). Nothing was sent. The node does not retry it: a name that does not exist does not come back by waiting.`,
		});
	}
	if (code === 'EAI_AGAIN') {
		return {
			retryable: true,
			message: `The host ${safeHost(call.url, 'hostname')} could not be looked up just now (DNS: ${code}): nothing was sent`,
			description:
				'A temporary DNS failure: retried within Max Retry Wait. If it lasts, check the Base URL and the DNS of the machine n8n runs on.',
		};
	}
	if (code !== undefined && NOT_CONNECTED.has(code)) {
		return {
			retryable: true,
			message: `Cannot reach the service at ${host} (connection refused): check the Base URL and that the service is up`,
			description: `Connection failed (${code}). Nothing was sent.`,
		};
	}
	const certificate = code === undefined ? undefined : CERTIFICATE_FAULTS[code];
	if (code !== undefined && certificate !== undefined)
		return certificateFailure(code, certificate, host);
	if (code === 'EPROTO' || code?.startsWith('ERR_SSL_')) {
		return {
			retryable: false,
			message: `The secure connection to ${host} could not be set up (${code}): nothing was sent`,
			description: `The TLS handshake failed before any data was sent: ${clip(rawMessage, MAX_QUOTED_CHARS)}. Check the Base URL's scheme and port (an https:// address on a port that speaks plain http gives this).`,
		};
	}
	const timedOut = (code !== undefined && TIMEOUT.has(code)) || /timeout/i.test(rawMessage);
	return {
		retryable: false,
		serviceMayHaveActed: true,
		message: timedOut
			? noAnswerInTime(call)
			: `The connection to ${host} broke before the answer to ${call.endpoint} arrived: outcome unknown`,
		description: `${UNKNOWN_OUTCOME} (${code ?? 'network error'}: ${clip(rawMessage, MAX_QUOTED_CHARS)})`,
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
	const chain = chainOf(error);
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
		message: `n8n's SSRF protection refused the address ${target}`,
		description: `Nothing was sent to ${call.endpoint}. n8n blocks requests to this address (N8N_SSRF_PROTECTION_ENABLED is on and the address is in N8N_SSRF_BLOCKED_IP_RANGES or N8N_SSRF_BLOCKED_HOSTNAMES). If it should be reachable, the n8n administrator allows it with N8N_SSRF_ALLOWED_HOSTNAMES=${host}${range}, then run this item again.`,
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
	// What broke on the way is safe to fetch again; what never left (and would fail the same way) is not.
	return safeToRepeat && failure.serviceMayHaveActed ? { ...failure, retryable: true } : failure;
}
