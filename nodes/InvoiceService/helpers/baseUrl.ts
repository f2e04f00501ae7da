import { shownUrl } from './shownUrl';

/** The path every workflow endpoint of the service lives under (a Bubble app's workflow API). */
export const API_PATH = '/api/1.1/wf';

/**
 * One step of reading a pasted Base URL: either undo a paste mistake whose meaning is certain, or refuse a URL
 * that is plainly not the workflow API. The steps are plain data (regular expressions and strings) because
 * two evaluators walk the same list: `normalizeBaseUrl` here for the node, and the credential's Test, whose
 * request URL can only be an n8n expression (`baseUrlExpression` writes that expression from this list).
 */
export type BaseUrlStep =
	| { fix: string; pattern: RegExp; replacement: string }
	| { refuse: string; pattern: RegExp };

export const BASE_URL_STEPS: readonly BaseUrlStep[] = [
	{
		refuse: 'is empty. It should look like https://your-app.bubbleapps.io/api/1.1/wf',
		pattern: /^\s*$/,
	},
	{ fix: 'surrounding spaces and line breaks', pattern: /^\s+|\s+$/g, replacement: '' },
	{ fix: 'no scheme: https', pattern: /^(?![a-z][a-z\d+.-]*:\/\/)/i, replacement: 'https://' },
	{ fix: 'a fragment (#...)', pattern: /#.*$/, replacement: '' },
	// A query string may carry Bubble's api_token: dropped here, it never reaches a request or a message.
	{ fix: 'a query string (?...)', pattern: /\?.*$/, replacement: '' },
	{ fix: 'trailing slashes', pattern: /\/+$/, replacement: '' },
	{
		fix: "an endpoint of this node's operations",
		pattern: /\/api\/1\.1\/wf\/+(create-customer|create-invoice)$/i,
		replacement: API_PATH,
	},
	{ fix: 'the API root without /wf', pattern: /\/api\/1\.1$/, replacement: API_PATH },
	{
		refuse:
			"is the Bubble editor, not your app. Use your app's address, e.g. https://your-app.bubbleapps.io/api/1.1/wf",
		pattern: /^https?:\/\/(www\.)?bubble\.io(\/|:|$)/i,
	},
	{
		refuse:
			"points to Bubble's Data API (/api/1.1/obj), but this node calls the Workflow API: use the address up to /api/1.1/wf",
		pattern: /\/api\/1\.1\/obj(\/|$)/i,
	},
	{
		refuse: 'is not the workflow API: the address must end at /api/1.1/wf',
		pattern: /\/api\/1\.1\/(?!wf(\/|$))/i,
	},
	{
		refuse:
			'names another workflow after /api/1.1/wf: the address must end at /api/1.1/wf (the node adds create-customer or create-invoice itself)',
		pattern: /\/api\/1\.1\/wf\/./i,
	},
	// The app's root (or its /version-test root) means its workflow API.
	{ fix: 'the app address alone', pattern: /(\/api\/1\.1\/wf)?$/, replacement: API_PATH },
];

/** What the Base URL means, or why it is refused (a sentence naming the Base URL). */
export type BaseUrlReading = { url: string } | { problem: string };

/**
 * What was entered, as a refusal quotes it: without a user name, password, query or fragment, which may hold
 * secrets (a password, Bubble's api_token). A pattern, not `shownUrl`, because the Test button's expression
 * (`baseUrlExpression`) must do the same with what an expression can run.
 */
const SECRETS_OF_ENTERED: readonly [RegExp, string][] = [
	[/^(\s*[a-z][a-z\d+.-]*:\/\/)[^/?#]*@/i, '$1'],
	[/[?#][^]*$/, ''],
];

function refusal(entered: string, reason: string): string {
	const shown = SECRETS_OF_ENTERED.reduce(
		(text, [pattern, by]) => text.replace(pattern, by),
		entered,
	);
	return `The Base URL "${shown.trim()}" ${reason}`;
}

/**
 * Reads what a user pasted into the credential's Base URL: trims it, adds https:// when no scheme is given,
 * drops a fragment, a query string, trailing slashes and a pasted create-customer / create-invoice endpoint,
 * and appends /api/1.1/wf to an app address. A URL that is plainly not the workflow API is refused.
 */
export function normalizeBaseUrl(input: string): BaseUrlReading {
	let url = input;
	for (const step of BASE_URL_STEPS) {
		if ('fix' in step) url = url.replace(step.pattern, step.replacement);
		else if (step.pattern.test(url)) return { problem: refusal(input.trim(), step.refuse) };
	}
	return { url };
}

/**
 * The same reading as an n8n expression body over `source` (e.g. `$credentials.baseUrl`), for the credential's
 * declarative Test request. A refusal throws, so the Test fails before anything is sent (n8n's tester reports it
 * as "ERR_INVALID_URL" (2.x) or "Invalid URL" (1.x) rather than with the sentence: it does not pass an
 * expression's error on).
 */
export function baseUrlExpression(source: string): string {
	const steps = BASE_URL_STEPS.map((step) =>
		'fix' in step
			? `url = url.replace(${String(step.pattern)}, ${JSON.stringify(step.replacement)});`
			: `if (${String(step.pattern)}.test(url)) throw new Error(${JSON.stringify('The Base URL "')} + entered + ${JSON.stringify(`" ${step.refuse}`)});`,
	);
	const shown = SECRETS_OF_ENTERED.map(
		([pattern, by]) => `.replace(${String(pattern)}, ${JSON.stringify(by)})`,
	).join('');
	return `(() => { const entered = String(${source} ?? "")${shown}.trim(); let url = String(${source} ?? ""); ${steps.join(' ')} return url; })()`;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** True for localhost, 127.0.0.0/8 and ::1, where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
	return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** Whether the credential's "Allow Plain HTTP" is on. */
export interface HttpAllowed {
	allowHttp: boolean;
}

/**
 * Checks a normalised base URL: it must be an absolute http(s) URL, and plain http is refused unless the host
 * is loopback or the user explicitly allowed it (the API key would otherwise travel unencrypted).
 * Returns a problem description a person can act on, or `null` when the URL is usable.
 */
export function checkBaseUrl(baseUrl: string, { allowHttp }: HttpAllowed): string | null {
	let url: URL;
	try {
		url = new URL(baseUrl);
	} catch {
		return `The Base URL "${baseUrl}" is not a valid URL. It should look like https://your-app.bubbleapps.io/api/1.1/wf`;
	}
	if (url.username || url.password) return userinfoRefusal(url);
	if (url.protocol === 'https:') return null;
	if (url.protocol !== 'http:') {
		return `The Base URL must start with https:// (got "${url.protocol}")`;
	}
	if (allowHttp || isLoopbackHost(url.hostname)) return null;
	return plainHttpRefusal(url.host);
}

/**
 * A user name or password in the Base URL: the HTTP client would send them as Basic credentials in place of the
 * key (the service then answers 401), and they would show wherever the URL is printed. Refused, never shown.
 */
function userinfoRefusal(url: URL): string {
	return `The Base URL "${shownUrl(url.href)}" contains a user name or password (before the "@"): remove it. The node sends only the API Key, as a Bearer header; a user name and password in the address would replace it`;
}

function plainHttpRefusal(host: string): string {
	return `The API key would go unencrypted to ${host} (plain http://): use https://, or turn on "Allow Plain HTTP" for a trusted local network`;
}

/** The address parts of a request as n8n hands them to the credential's `authenticate`. */
export interface RequestAddress {
	url?: unknown;
	baseURL?: unknown;
	/** The legacy request helpers' name for `url`. */
	uri?: unknown;
}

/** An absolute URL (or a protocol-relative one) in axios's sense: such a `url` ignores `baseURL`. */
const ABSOLUTE_URL = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/**
 * The URL a request goes to, joined as axios (n8n's HTTP client, 1.x and 2.x) joins it: an absolute `url` as
 * it is, a relative one after `baseURL`. Undefined when there is no address at all.
 */
export function requestTarget({ url, baseURL, uri }: RequestAddress): string | undefined {
	const path = typeof url === 'string' ? url : typeof uri === 'string' ? uri : '';
	if (ABSOLUTE_URL.test(path.trim()) || typeof baseURL !== 'string' || baseURL === '') {
		return path === '' ? undefined : path;
	}
	return path === '' ? baseURL : `${baseURL.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The last guard before the key is attached (the credential's `authenticate`, which n8n runs for the Test
 * button and for every request of the node): a request whose address carries a user name or password is
 * refused, and so is one to plain http on a host other than this machine unless "Allow Plain HTTP" is on. The
 * node refuses such a Base URL earlier with the same sentence;
 * the Test button has no earlier step that can show one. A URL that does not parse is left alone: n8n's
 * client cannot send to it either. Returns the problem (never the key), or `null`.
 */
export function addressProblem(request: RequestAddress, { allowHttp }: HttpAllowed): string | null {
	const url = parsedTarget(request);
	if (url === undefined) return null;
	if (url.username || url.password) return userinfoRefusal(url);
	if (allowHttp) return null;
	if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return null;
	return plainHttpRefusal(url.host);
}

function parsedTarget(request: RequestAddress): URL | undefined {
	const target = requestTarget(request);
	if (target === undefined) return undefined;
	try {
		return new URL(target.trim());
	} catch {
		return undefined;
	}
}

/** The Base URL the node calls, or the one problem that keeps it from being used. */
export function resolveBaseUrl(input: string, allowed: HttpAllowed): BaseUrlReading {
	const reading = normalizeBaseUrl(input);
	if ('problem' in reading) return reading;
	const problem = checkBaseUrl(reading.url, allowed);
	return problem ? { problem } : reading;
}
