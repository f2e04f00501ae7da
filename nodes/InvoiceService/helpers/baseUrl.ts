/** The path every workflow endpoint of the service lives under (a Bubble app's workflow API). */
export const API_PATH = '/api/1.1/wf';

export interface BaseUrlProblem {
	problem: string;
}

/**
 * Normalises what a user pasted into the credential's Base URL: trims it, drops trailing slashes, and appends
 * `/api/1.1/wf` when the app's root (or its `/version-test` root) was given.
 */
export function normalizeBaseUrl(input: string): string {
	const trimmed = input.trim().replace(/\/+$/, '');
	return trimmed.endsWith(API_PATH) ? trimmed : `${trimmed}${API_PATH}`;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** True for localhost, 127.0.0.0/8 and ::1, where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
	return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Checks a normalised base URL: it must be an absolute http(s) URL, and plain http is refused unless the host
 * is loopback or the user explicitly allowed it (the API key would otherwise travel unencrypted).
 * Returns a problem description a person can act on, or `null` when the URL is usable.
 */
export function checkBaseUrl(baseUrl: string, allowHttp: boolean): string | null {
	let url: URL;
	try {
		url = new URL(baseUrl);
	} catch {
		return `The Base URL "${baseUrl}" is not a valid URL. It should look like https://your-app.bubbleapps.io/api/1.1/wf`;
	}
	if (url.protocol === 'https:') return null;
	if (url.protocol !== 'http:') {
		return `The Base URL must start with https:// (got "${url.protocol}")`;
	}
	if (allowHttp || isLoopbackHost(url.hostname)) return null;
	return `The Base URL uses plain http://, which would send the API key unencrypted to ${url.host}. Use https://, or turn on "Allow Plain HTTP" in the credential if this is a trusted local network`;
}
