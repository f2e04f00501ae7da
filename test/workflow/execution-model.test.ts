import nock from 'nock';
import type { IDataObject } from 'n8n-workflow';

import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import { servicePace } from '../../nodes/InvoiceService/transport/pace';
import type { OnError } from '../support/harness/run-node';
import {
	API,
	API_KEY,
	ORIGIN,
	customerParameters,
	everythingVisible,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';

afterEach(() => {
	nock.cleanAll();
	jest.restoreAllMocks();
});

const people = (count: number, prefix = 'ada') =>
	Array.from({ length: count }, (_, index) => ({
		first: 'Ada',
		last: 'Lovelace',
		email: `${prefix}${index}@example.com`,
	}));
const errorOf = (item: { json: IDataObject }) => item.json.error as IDataObject;

describe('Continue means continue: problems found before sending become paired error items', () => {
	const problems: Array<[string, Parameters<typeof runInvoiceService>[0], RegExp]> = [
		[
			'a refused Base URL',
			{ parameters: customerParameters(), credentials: { baseUrl: 'https://bubble.io/page' } },
			/The Base URL "https:\/\/bubble.io\/page" is the Bubble editor/,
		],
		[
			'a run option out of range',
			{ parameters: customerParameters({ options: { concurrency: 500 } }) },
			/Concurrency/,
		],
		[
			'an API key that cannot travel in a header',
			{ parameters: customerParameters(), credentials: { apiKey: 'test key 42' } },
			/The API Key in the Invoice Service API credential contains a space at character 5/,
		],
	];

	it.each(problems)('%s, under Continue (using error output)', async (_name, run, message) => {
		const result = await runInvoiceService({
			...run,
			items: people(3),
			onError: 'continueErrorOutput',
		});
		expect(result.status).toBe('success');
		expect(result.outputs[0]).toHaveLength(0);
		expect(result.outputs[1]).toHaveLength(3);
		result.outputs[1].forEach((item, index) => {
			expect(item.pairedItem).toEqual({ item: index });
			expect(String(errorOf(item).message)).toMatch(message);
			expect(errorOf(item).itemIndex).toBe(index);
		});
	});

	it.each(problems)('%s, under Continue (regular output)', async (_name, run, message) => {
		const result = await runInvoiceService({
			...run,
			items: people(2),
			onError: 'continueRegularOutput',
		});
		expect(result.status).toBe('success');
		expect(result.outputs[0].map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		for (const item of result.outputs[0]) expect(String(errorOf(item).message)).toMatch(message);
	});

	it.each(problems)(
		'%s, under Stop Workflow: stops with the same message',
		async (_name, run, message) => {
			const result = await runInvoiceService({ ...run, items: people(2) });
			expect(result.status).toBe('error');
			expect(result.error?.message).toMatch(message);
			expect(result.error?.description).toMatch(/^Nothing was sent|Nothing was sent/);
		},
	);
});

describe('a refused key ends sending for the run', () => {
	/** Accepts `acceptFirst` creates, then refuses the key (it was revoked mid-run). */
	function revokedAfter(acceptFirst: number) {
		let received = 0;
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(100)
			.reply(() => {
				received++;
				if (received > acceptFirst) return [401, { status: 'error', message: 'Unauthorized' }];
				return [200, { status: 'success', response: { id: `cust_${received}` } }];
			});
		return () => received;
	}

	it.each<[OnError, number]>([
		['continueErrorOutput', 1],
		['continueRegularOutput', 0],
	])(
		'%s: after the 401 nothing more is sent; the rest fail as "not sent", paired',
		async (onError, errorOutput) => {
			const received = revokedAfter(3);
			const result = await runInvoiceService({
				parameters: customerParameters({ options: { concurrency: 1 } }),
				items: people(10),
				onError,
			});
			expect(received()).toBe(4);
			const errors = result.outputs[errorOutput].filter((item) => item.json.error);
			expect(errors.map((item) => item.pairedItem)).toEqual(
				[3, 4, 5, 6, 7, 8, 9].map((item) => ({ item })),
			);
			expect(errorOf(errors[0]).httpCode).toBe('401');
			for (const item of errors.slice(1)) {
				expect(String(errorOf(item).message)).toMatch(
					/^Not sent: the service refused the API key earlier in this run \(HTTP 401\)/,
				);
			}
			expect(everythingVisible(result)).not.toContain(API_KEY);
		},
	);

	it('with several in flight, only the requests already in flight meet the 401', async () => {
		const received = revokedAfter(0);
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 4 } }),
			items: people(40),
			onError: 'continueErrorOutput',
		});
		expect(received()).toBeLessThanOrEqual(4);
		expect(result.outputs[1]).toHaveLength(40);
		const hints = (result.taskData?.hints ?? []).map((hint) => hint.message);
		expect(hints).toContainEqual(
			expect.stringMatching(
				new RegExp(
					`^${40 - received()} item\\(s\\) were not sent: the service refused the API key earlier in this run \\(HTTP 401\\)`,
				),
			),
		);
	});

	it('Stop Workflow: the stop report says the other items were not sent because the key was refused', async () => {
		revokedAfter(2);
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(6),
		});
		expect(result.error?.message).toMatch(/The API key was rejected \(HTTP 401\)/);
		expect(result.error?.description).toMatch(
			/Already created in this run before it stopped: item 0 \(cust_1\), item 1 \(cust_2\)\..*3 other item\(s\) were not sent: the service refused the API key\./,
		);
	});
});

describe('a 401 from a file host is not about the key', () => {
	it('an invoice whose PDF (on another host) answers 401 fails alone; the next items are still sent', async () => {
		let invoices = 0;
		nock(ORIGIN)
			.post(`${API}/create-invoice`)
			.times(3)
			.reply(() => {
				invoices++;
				const id = `inv_${invoices}`;
				return [
					200,
					{ invoice_id: id, status: 'sent', download_url: `https://files.example.net/${id}.pdf` },
				];
			});
		nock('https://files.example.net')
			.get(/inv_\d\.pdf/)
			.times(3)
			.reply((uri) =>
				uri.includes('inv_1')
					? [401, 'no']
					: [200, Buffer.from('%PDF-1.4 test'), { 'Content-Type': 'application/pdf' }],
			);
		const result = await runInvoiceService({
			parameters: invoiceParameters({ options: { downloadPdf: true, concurrency: 1 } }),
			items: [{}, {}, {}],
			onError: 'continueErrorOutput',
		});
		expect(invoices).toBe(3);
		expect(result.outputs[0].map((item) => item.json.invoice_id)).toEqual(['inv_2', 'inv_3']);
		expect(String(errorOf(result.outputs[1][0]).message)).toMatch(
			/^Invoice inv_1 was created, but its PDF could not be downloaded/,
		);
	});
});

describe('keys as people paste them', () => {
	it.each([
		['surrounding spaces and a trailing newline', `  ${API_KEY}\n`],
		['a leading "Bearer "', `Bearer ${API_KEY}`],
		['"bearer" in lower case, with a tab and a Windows line end', `bearer\t${API_KEY}\r\n`],
		['a whole header line, quoted', `Authorization: Bearer "${API_KEY}"`],
	])('%s: the header carries the bare key', async (_name, pasted) => {
		const scope = nock(ORIGIN, { reqheaders: { authorization: `Bearer ${API_KEY}` } })
			.post(`${API}/create-customer`)
			.reply(200, { status: 'success', response: { id: 'cust_1' } });
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: people(1),
			credentials: { apiKey: pasted },
		});
		expect(result.error).toBeUndefined();
		expect(scope.isDone()).toBe(true);
	});

	it.each([
		['a line break inside', 'test-key\n42', 'a line break at character 9'],
		['a stray typographic quote', 'test-key-42”', 'the character U+201D at character 12'],
		['only "Bearer"', 'Bearer ', 'is empty'],
	])('%s: refused before sending, naming the API Key field', async (_name, pasted, problem) => {
		const result = await runInvoiceService({
			parameters: customerParameters(),
			items: people(1),
			credentials: { apiKey: pasted },
		});
		expect(result.error?.message).toContain(
			`The API Key in the Invoice Service API credential ${problem.includes('empty') ? '' : 'contains '}${problem}`,
		);
		expect(result.error?.message).not.toContain('Invalid character in header content');
		expect(everythingVisible(result)).not.toContain('test-key');
	});

	it("the credential's own authenticate (used by its Test button) reads keys the same way", async () => {
		const credential = new InvoiceServiceApi();
		const request = await credential.authenticate(
			{ apiKey: ` Bearer ${API_KEY}\n` },
			{ url: 'https://app.example.com', headers: {} },
		);
		expect(request.headers?.Authorization).toBe(`Bearer ${API_KEY}`);
		await expect(
			credential.authenticate({ apiKey: 'two\nlines' }, { url: 'https://app.example.com' }),
		).rejects.toThrow(
			'The API Key in the Invoice Service API credential contains a line break at character 4',
		);
	});
});

describe('one pause per service and key, shared by concurrent executions', () => {
	it('once one execution is told to wait, the others wait for the same moment instead of sending into the limit', async () => {
		// The service refuses everything for the first 600 ms after its first request, then accepts.
		let openAt = 0;
		let refusals = 0;
		let accepted = 0;
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(200)
			.reply(() => {
				const now = Date.now();
				if (openAt === 0) openAt = now + 600;
				if (now < openAt) {
					refusals++;
					return [429, { status: 'error', message: 'slow down' }, { 'Retry-After': '1' }];
				}
				accepted++;
				return [200, { status: 'success', response: { id: `cust_${accepted}` } }];
			});
		// The next executions start once the first one has met the limit and the pause is set (not after a guessed
		// delay, which a busy machine may outlast): whatever the timing, they find the service paused.
		const refused = servicePace.refused.bind(servicePace);
		const paused = new Promise<void>((resolve) => {
			jest.spyOn(servicePace, 'refused').mockImplementation((...args) => {
				refused(...args);
				resolve();
			});
		});
		const first = runInvoiceService({
			parameters: customerParameters(),
			items: people(1, 'first'),
		});
		await paused;
		const others = Array.from({ length: 8 }, (_, execution) =>
			runInvoiceService({ parameters: customerParameters(), items: people(2, `e${execution}-`) }),
		);
		const results = await Promise.all([first, ...others]);
		for (const result of results) expect(result.error).toBeUndefined();
		expect(accepted).toBe(17);
		// Only the first request met the limit: the 16 of the other executions waited for the shared pause.
		expect(refusals).toBe(1);
		const hints = results
			.slice(1)
			.map((result) => (result.taskData?.hints ?? []).map((hint) => hint.message).join(' '));
		for (const hint of hints)
			expect(hint).toMatch(/request\(s\) were held back .* to stay under the service's rate limit/);
		expect(servicePace.activeServices()).toBeGreaterThan(0);
	});
});
