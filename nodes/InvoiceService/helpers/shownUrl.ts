/**
 * A URL as the node may print or record it: scheme, host, port and path, never a user name, password, query
 * or fragment, which may hold secrets (a password pasted into the Base URL, a signed download link's token).
 * A text that does not parse as a URL loses the same parts by pattern.
 */
export function shownUrl(url: string): string {
	try {
		const parsed = new URL(url);
		return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
	} catch {
		return url.replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#]*@/i, '$1').replace(/[?#].*$/s, '');
	}
}

/** Whether a URL carries a user name or password (`https://user:password@host/...`). */
export function hasUserinfo(url: string): boolean {
	return /^[a-z][a-z\d+.-]*:\/\/[^/?#]*@/i.test(url.trim());
}
