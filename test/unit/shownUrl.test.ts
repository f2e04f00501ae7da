import { hasUserinfo, shownUrl } from '../../nodes/InvoiceService/helpers/shownUrl';

describe('shownUrl: a URL as the node prints it, its secrets left out', () => {
	it.each([
		[
			'https://user:pw@app.example.com:8443/api/1.1/wf?api_token=t#x',
			'https://app.example.com:8443/api/1.1/wf',
		],
		[
			'https://files.example.net/inv_1.pdf?X-Amz-Signature=abc',
			'https://files.example.net/inv_1.pdf',
		],
		['http://127.0.0.1:5678/api/1.1/wf', 'http://127.0.0.1:5678/api/1.1/wf'],
		['not a url?token=t', 'not a url'],
		['https://user:pw@[bad/x?y', 'https://[bad/x'],
	])('%s → %s', (url, shown) => {
		expect(shownUrl(url)).toBe(shown);
	});

	it('tells a URL with a user name or password', () => {
		expect(hasUserinfo('https://u:p@host/x')).toBe(true);
		expect(hasUserinfo('https://u@host/x')).toBe(true);
		expect(hasUserinfo('https://host/x?email=a@b.c')).toBe(false);
		expect(hasUserinfo('https://host/a@b')).toBe(false);
	});
});
