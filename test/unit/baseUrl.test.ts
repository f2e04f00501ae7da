import { Workflow, type INode, type INodeTypes } from 'n8n-workflow';

import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import {
	baseUrlExpression,
	checkBaseUrl,
	isLoopbackHost,
	normalizeBaseUrl,
	addressProblem,
	requestTarget,
	resolveBaseUrl,
} from '../../nodes/InvoiceService/helpers/baseUrl';

const WF = 'https://app.example.com/api/1.1/wf';
const TEST_WF = 'https://app.example.com/version-test/api/1.1/wf';

/** Every paste shape whose meaning is certain, and what it means. */
const SHAPES: Array<[string, string]> = [
	['https://app.example.com', WF],
	['https://app.example.com/', WF],
	['  https://app.example.com/api/1.1/wf/  ', WF],
	['\thttps://app.example.com/api/1.1/wf\n', WF],
	[WF, WF],
	['https://app.example.com/version-test', TEST_WF],
	['https://app.example.com/version-test/api/1.1/wf//', TEST_WF],
	// a pasted endpoint of either operation
	['https://app.example.com/api/1.1/wf/create-customer', WF],
	['https://app.example.com/api/1.1/wf/create-invoice', WF],
	['https://app.example.com/api/1.1/wf/create-invoice/', WF],
	['https://app.example.com/version-test/api/1.1/wf/create-customer', TEST_WF],
	['https://app.example.com/api/1.1/wf//create-customer', WF],
	['https://app.example.com/api/1.1/wf/Create-Invoice', WF],
	// query strings and fragments (a query may carry api_token: it is dropped)
	['https://app.example.com/api/1.1/wf?api_token=abc', WF],
	['https://app.example.com/api/1.1/wf/create-customer?debug=true', WF],
	['https://app.example.com/api/1.1/wf/#section', WF],
	['https://app.example.com/version-test/?x=1#top', TEST_WF],
	['https://app.example.com/api/1.1/wf/create-invoice/?a=b#c', WF],
	// the API root without /wf, and no scheme at all
	['https://app.example.com/api/1.1', WF],
	['https://app.example.com/api/1.1/', WF],
	['app.example.com', WF],
	['app.example.com/api/1.1/wf/create-customer', WF],
	['HTTPS://app.example.com/api/1.1/wf', 'HTTPS://app.example.com/api/1.1/wf'],
	['http://127.0.0.1:8787', 'http://127.0.0.1:8787/api/1.1/wf'],
	['localhost:8787/api/1.1/wf', 'https://localhost:8787/api/1.1/wf'],
	// a reverse proxy's path prefix is kept
	['https://proxy.example.com/invoices', 'https://proxy.example.com/invoices/api/1.1/wf'],
];

/** URLs that are plainly not the workflow API, and the words the refusal must contain. */
const REFUSED: Array<[string, RegExp]> = [
	['https://app.example.com/api/1.1/obj/customer', /Data API \(\/api\/1\.1\/obj\)/],
	['https://app.example.com/api/1.1/obj', /Data API/],
	['https://app.example.com/version-test/api/1.1/obj/invoice/123?x=1', /Data API/],
	['https://app.example.com/api/1.1/meta', /is not the workflow API/],
	['https://app.example.com/api/1.1/meta/swagger.json', /is not the workflow API/],
	['https://app.example.com/api/1.1/wf/send-reminder', /names another workflow/],
	['https://app.example.com/api/1.1/wf/create-customer/extra', /names another workflow/],
	['https://bubble.io/page?name=index&id=my-app', /Bubble editor/],
	['https://www.bubble.io', /Bubble editor/],
	['', /is empty/],
	['   ', /is empty/],
];

describe('normalizeBaseUrl', () => {
	it.each(SHAPES)('%j → %s', (input, expected) => {
		expect(normalizeBaseUrl(input)).toEqual({ url: expected });
	});

	it.each(REFUSED)('refuses %j, naming the Base URL', (input, words) => {
		const reading = normalizeBaseUrl(input);
		expect(reading).toEqual({ problem: expect.stringMatching(words) });
		// Quoted without a query or fragment, which may carry a token.
		const shown = input.trim().replace(/[?#].*$/, '');
		expect((reading as { problem: string }).problem).toContain(`The Base URL "${shown}"`);
	});

	it('never repeats a query string, which may carry a token, in a refusal', () => {
		expect(normalizeBaseUrl('https://app.example.com/api/1.1/wf?api_token=abc')).toEqual({
			url: WF,
		});
	});
});

describe('the credential Test reads the Base URL with the same steps, in n8n’s expression engine', () => {
	const node: INode = {
		id: 'n',
		name: 'Test',
		type: 'test',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const nodeTypes = { getByName: () => undefined, getByNameAndVersion: () => undefined };
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: nodeTypes as unknown as INodeTypes,
	});
	const credentialTestUrl = new InvoiceServiceApi().test.request.baseURL as string;
	const evaluate = (baseUrl: string) =>
		workflow.expression.getSimpleParameterValue(node, credentialTestUrl, 'internal', {
			$credentials: { baseUrl },
		} as never);

	it('is the expression written from the steps', () => {
		expect(credentialTestUrl).toBe(`={{ ${baseUrlExpression('$credentials.baseUrl')} }}`);
	});

	it.each(SHAPES)('%j → %s', (input, expected) => {
		expect(evaluate(input)).toBe(expected);
	});

	// The expression throws the node's sentence. n8n swallows errors thrown inside a credential test's
	// expression (this engine, and the real credential tester of 1.x and 2.x: test/e2e/credential-test.test.ts), which
	// leaves the Test request without a URL: it fails and nothing is sent.
	it.each(REFUSED)('refuses %j: no URL to send to', (input) => {
		let value: unknown;
		try {
			value = evaluate(input);
		} catch (error) {
			expect((error as Error).message).toContain(
				(normalizeBaseUrl(input) as { problem: string }).problem,
			);
			return;
		}
		expect(value ?? undefined).toBeUndefined();
	});
});

describe('checkBaseUrl', () => {
	it('accepts https', () => {
		expect(checkBaseUrl('https://app.example.com/api/1.1/wf', { allowHttp: false })).toBeNull();
	});

	it('refuses plain http to another host unless allowed', () => {
		const problem = checkBaseUrl('http://app.example.com/api/1.1/wf', { allowHttp: false });
		expect(problem).toMatch(
			/unencrypted to app\.example\.com \(plain http:\/\/\).*Allow Plain HTTP/,
		);
		expect(checkBaseUrl('http://app.example.com/api/1.1/wf', { allowHttp: true })).toBeNull();
	});

	it.each([
		'http://127.0.0.1:8787/api/1.1/wf',
		'http://localhost/api/1.1/wf',
		'http://[::1]:80/api/1.1/wf',
	])('allows plain http to loopback %s', (url) => {
		expect(checkBaseUrl(url, { allowHttp: false })).toBeNull();
	});

	it('explains a URL that is not one', () => {
		expect(checkBaseUrl('https://exa mple.com/api/1.1/wf', { allowHttp: false })).toMatch(
			/not a valid URL/,
		);
		expect(checkBaseUrl('ftp://app.example.com/api/1.1/wf', { allowHttp: false })).toMatch(
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

describe('resolveBaseUrl', () => {
	it('normalises, then checks', () => {
		expect(
			resolveBaseUrl('app.example.com/api/1.1/wf/create-invoice?x=1', { allowHttp: false }),
		).toEqual({
			url: WF,
		});
		expect(resolveBaseUrl('http://app.example.com', { allowHttp: false })).toEqual({
			problem: expect.stringMatching(/plain http/),
		});
		expect(resolveBaseUrl('ftp://app.example.com', { allowHttp: false })).toEqual({
			problem: expect.stringMatching(/must start with https/),
		});
		expect(resolveBaseUrl('https://app.example.com/api/1.1/obj/user', { allowHttp: true })).toEqual(
			{
				problem: expect.stringMatching(/Data API/),
			},
		);
	});
});

// The credential's authenticate runs this on every request before the key is attached, the Test button's
// included (issue 35: the Test sent the key over plain http to another host).
describe('addressProblem: no key over plain http to another host', () => {
	const OFF = { allowHttp: false };
	const LAN = 'http://invoice-lan.test:8787/api/1.1/wf';

	it.each([
		['the Test request (baseURL + url)', { baseURL: LAN, url: '/create-customer' }],
		['an absolute url', { url: `${LAN}/create-invoice` }],
		['an absolute url whatever the baseURL', { baseURL: 'https://app.example.com', url: LAN }],
		['a legacy request (uri)', { uri: `${LAN}/create-customer` }],
		['a baseURL alone', { baseURL: LAN }],
		['upper case and spaces', { url: ` HTTP://Invoice-LAN.test:8787/x` }],
		['a host that only starts like loopback', { url: 'http://127.0.0.1.example.com/x' }],
		['a private address', { url: 'http://192.168.1.20/api/1.1/wf' }],
	])('refuses %s, naming the host and "Allow Plain HTTP"', (_name, request) => {
		const problem = addressProblem(request, OFF);
		expect(problem).toMatch(
			/^The API key would go unencrypted to .+ \(plain http:\/\/\): use https:\/\/, or turn on "Allow Plain HTTP" for a trusted local network$/,
		);
	});

	it('names the host with its port', () => {
		expect(addressProblem({ baseURL: LAN, url: '/create-customer' }, OFF)).toContain(
			'unencrypted to invoice-lan.test:8787 (plain http://)',
		);
	});

	it.each([
		['https', { baseURL: 'https://app.example.com/api/1.1/wf', url: '/create-customer' }],
		['https url after an http baseURL', { baseURL: LAN, url: 'https://app.example.com/x' }],
		['localhost', { baseURL: 'http://localhost:8787/api/1.1/wf', url: '/create-customer' }],
		['127.0.0.1', { url: 'http://127.0.0.1:8787/api/1.1/wf/create-customer' }],
		['another 127.x address', { url: 'http://127.10.20.30/x' }],
		['[::1]', { url: 'http://[::1]:8787/x' }],
		['no address at all', {}],
		['an address that does not parse (nothing can be sent to it)', { url: '/create-customer' }],
	])('lets %s through', (_name, request) => {
		expect(addressProblem(request, OFF)).toBeNull();
	});

	it('lets plain http to another host through when "Allow Plain HTTP" is on', () => {
		expect(
			addressProblem({ baseURL: LAN, url: '/create-customer' }, { allowHttp: true }),
		).toBeNull();
	});

	it('joins baseURL and url as axios does', () => {
		expect(requestTarget({ baseURL: `${LAN}/`, url: '/create-customer' })).toBe(
			`${LAN}/create-customer`,
		);
		expect(requestTarget({ baseURL: LAN, url: 'https://other.example.com/x' })).toBe(
			'https://other.example.com/x',
		);
		expect(requestTarget({ baseURL: LAN, url: '//other.example.com/x' })).toBe(
			'//other.example.com/x',
		);
		expect(requestTarget({})).toBeUndefined();
	});
});

describe("the credential's authenticate refuses plain http to another host", () => {
	const credential = new InvoiceServiceApi();
	const KEY = 'secret-key-1234';
	const request = { baseURL: 'http://invoice-lan.test:8787/api/1.1/wf', url: '/create-customer' };

	it('throws the sentence, without the key, and attaches nothing', async () => {
		const attempt = credential.authenticate({ apiKey: KEY, allowHttp: false }, { ...request });
		await expect(attempt).rejects.toThrow(/"Allow Plain HTTP"/);
		const message = await attempt.catch((error: Error) => `${error.message} ${error.stack}`);
		expect(message).not.toContain(KEY);
		expect(message).toContain('invoice-lan.test:8787');
	});

	it('an unset switch counts as off', async () => {
		await expect(credential.authenticate({ apiKey: KEY }, { ...request })).rejects.toThrow(
			/Allow Plain HTTP/,
		);
	});

	it.each([
		['"Allow Plain HTTP" on', { allowHttp: true }, request],
		['https', { allowHttp: false }, { ...request, baseURL: 'https://app.example.com/api/1.1/wf' }],
		['loopback', { allowHttp: false }, { ...request, baseURL: 'http://127.0.0.1:8787/api/1.1/wf' }],
	])('sets the Bearer header with %s', async (_name, switches, options) => {
		const sent = await credential.authenticate({ apiKey: KEY, ...switches }, { ...options });
		expect(sent.headers?.Authorization).toBe(`Bearer ${KEY}`);
	});
});

describe('a user name or password in the Base URL', () => {
	const withSecret = 'https://invoice-admin:pa55-w0rd@app.example.com/api/1.1/wf';

	it('is refused by the node, naming the Base URL without the secret', () => {
		const reading = resolveBaseUrl(withSecret, { allowHttp: false });
		expect(reading).toEqual({
			problem: expect.stringMatching(
				/^The Base URL "https:\/\/app\.example\.com\/api\/1\.1\/wf" contains a user name or password/,
			),
		});
		expect(JSON.stringify(reading)).not.toMatch(/pa55|invoice-admin/);
	});

	it('is refused before the key is attached (the Test button and every request)', () => {
		const problem = addressProblem(
			{ baseURL: withSecret, url: '/create-customer' },
			{ allowHttp: true },
		);
		expect(problem).toMatch(/contains a user name or password/);
		expect(problem).not.toMatch(/pa55|invoice-admin/);
	});

	it('never shows in another refusal either', () => {
		const reading = normalizeBaseUrl(
			'https://admin:pa55-w0rd@app.example.com/api/1.1/obj/invoice?api_token=t0ken',
		);
		expect(JSON.stringify(reading)).not.toMatch(/pa55|admin|t0ken/);
		expect(reading).toEqual({
			problem: expect.stringContaining('"https://app.example.com/api/1.1/obj/invoice" points to'),
		});
	});
});
