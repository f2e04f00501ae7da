import { readApiKey } from '../../nodes/InvoiceService/helpers/apiKey';

const KEY = 'abc123-XYZ_789';

describe('readApiKey: the key as people paste it', () => {
	it.each([
		['as issued', KEY],
		['spaces and line breaks around it', ` \t${KEY}\r\n`],
		['invisible characters around it (zero-width space, byte-order mark)', `\u200B${KEY}\uFEFF`],
		['a leading "Bearer "', `Bearer ${KEY}`],
		['"BEARER" with a tab', `BEARER\t${KEY}`],
		['a whole "Authorization: Bearer" header line', `Authorization: Bearer ${KEY}`],
		['straight double quotes', `"${KEY}"`],
		['single quotes', `'${KEY}'`],
		['typographic quotes', `\u201C${KEY}\u201D`],
		['"Bearer" outside the quotes', `Bearer "${KEY}"`],
		['"Bearer" inside the quotes', `"Bearer ${KEY}"`],
	])('%s → the bare key', (_name, pasted) => {
		expect(readApiKey(pasted)).toEqual({ key: KEY });
	});

	it('keeps quotes that do not pair (visible ASCII can be part of a key)', () => {
		expect(readApiKey(`"${KEY}'`)).toEqual({ key: `"${KEY}'` });
	});

	it.each([
		['nothing', undefined, 'is empty'],
		['only spaces', '   ', 'is empty'],
		['only "Bearer"', 'Bearer ', 'is empty'],
		['empty quotes', '""', 'is empty'],
		['a space inside', 'abc 123', 'contains a space at character 4'],
		['a line break inside', 'abc\n123', 'contains a line break at character 4'],
		['a tab inside', 'abc\t123', 'contains a tab at character 4'],
		['"Bearer" twice', `Bearer Bearer ${KEY}`, 'contains a space at character 7'],
		['a non-Latin letter', 'ключ', 'contains the character U+043A at character 1'],
		[
			'an emoji (one character, two code units)',
			'ab🔑c',
			'contains the character U+1F511 at character 3',
		],
	])('%s → refused, naming the API Key field and where', (_name, pasted, problem) => {
		const reading = readApiKey(pasted);
		expect(reading).toEqual({ problem: expect.stringContaining(problem) });
		const { problem: message } = reading as { problem: string };
		expect(message).toMatch(/^The API Key in the Invoice Service API credential /);
		if (typeof pasted === 'string' && pasted.trim().length > 3)
			expect(message).not.toContain(pasted.trim());
	});
});
