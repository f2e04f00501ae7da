import {
	checkBaseUrl,
	isLoopbackHost,
	normalizeBaseUrl,
} from '../../nodes/InvoiceService/helpers/baseUrl';

describe('normalizeBaseUrl', () => {
	it.each([
		['https://app.example.com', 'https://app.example.com/api/1.1/wf'],
		['https://app.example.com/', 'https://app.example.com/api/1.1/wf'],
		['  https://app.example.com/api/1.1/wf/  ', 'https://app.example.com/api/1.1/wf'],
		['https://app.example.com/api/1.1/wf', 'https://app.example.com/api/1.1/wf'],
		['https://app.example.com/version-test', 'https://app.example.com/version-test/api/1.1/wf'],
		[
			'https://app.example.com/version-test/api/1.1/wf//',
			'https://app.example.com/version-test/api/1.1/wf',
		],
	])('%s → %s', (input, expected) => {
		expect(normalizeBaseUrl(input)).toBe(expected);
	});

	it('agrees with the expression the credential test uses', () => {
		// Same regexes as NORMALISED_BASE_URL in the credential (evaluated by n8n there).
		const expression = (url: string) =>
			url
				.trim()
				.replace(/\/+$/, '')
				.replace(/(\/api\/1\.1\/wf)?$/, '/api/1.1/wf');
		for (const input of [
			'https://a.io',
			'https://a.io/',
			'https://a.io/api/1.1/wf/',
			'https://a.io/version-test',
		]) {
			expect(expression(input)).toBe(normalizeBaseUrl(input));
		}
	});
});

describe('checkBaseUrl', () => {
	it('accepts https', () => {
		expect(checkBaseUrl('https://app.example.com/api/1.1/wf', false)).toBeNull();
	});

	it('refuses plain http to another host unless allowed', () => {
		const problem = checkBaseUrl('http://app.example.com/api/1.1/wf', false);
		expect(problem).toMatch(/plain http:\/\/.*unencrypted to app\.example\.com.*Allow Plain HTTP/);
		expect(checkBaseUrl('http://app.example.com/api/1.1/wf', true)).toBeNull();
	});

	it.each([
		'http://127.0.0.1:8787/api/1.1/wf',
		'http://localhost/api/1.1/wf',
		'http://[::1]:80/api/1.1/wf',
	])('allows plain http to loopback %s', (url) => {
		expect(checkBaseUrl(url, false)).toBeNull();
	});

	it('explains a URL that is not one', () => {
		expect(checkBaseUrl('app.example.com/api/1.1/wf', false)).toMatch(/not a valid URL/);
		expect(checkBaseUrl('ftp://app.example.com/api/1.1/wf', false)).toMatch(
			/must start with https/,
		);
	});

	it('knows loopback hosts', () => {
		expect(isLoopbackHost('127.10.0.1')).toBe(true);
		expect(isLoopbackHost('localhost')).toBe(true);
		expect(isLoopbackHost('128.0.0.1')).toBe(false);
		expect(isLoopbackHost('127.example.com')).toBe(false);
	});
});
