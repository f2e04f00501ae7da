// The way from n8n to the service (issue 43), in-process against real local servers (not nock: the failures
// are the network's own): a redirect of a create is never followed and names its target; a refused port, a
// host that does not exist and a certificate the machine does not trust are each said for what they are,
// never an unknown outcome, while a private CA once trusted works; a password in the Base URL is refused and
// never printed. Each test shows what the servers received. test/e2e/way-to-service.test.ts runs the same in a real n8n, both majors.
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';

import nock from 'nock';

import { type RunResult } from '../support/harness/run-node';
import {
	customerParameters,
	everythingVisible,
	invoiceParameters,
	runInvoiceService,
} from '../support/invoice-service';
import {
	API,
	CA_FILE,
	REDIRECT_STATUSES,
	type Certificate,
	type RecordingServer,
	WAY_KEY,
	redirectTo,
	refusedPort,
	startRecordingServer,
} from '../support/way-to-service';

const PEOPLE = [1, 2, 3].map((n) => ({
	first: 'Ada',
	last: `Way${n}`,
	email: `way${n}@example.com`,
}));
const servers: RecordingServer[] = [];

beforeAll(() => {
	// Only loopback servers and the reserved .invalid names (which never resolve) may be reached.
	nock.enableNetConnect((host) => host.startsWith('127.0.0.1') || /\.invalid(:\d+)?$/.test(host));
});
afterAll(async () => {
	await Promise.all(servers.map((server) => server.close()));
});

async function server(...args: Parameters<typeof startRecordingServer>): Promise<RecordingServer> {
	const started = await startRecordingServer(...args);
	servers.push(started);
	return started;
}

async function createCustomers(baseUrl: string, items = PEOPLE, maxRetryWait = 60) {
	return await runInvoiceService({
		credentials: { baseUrl, apiKey: WAY_KEY },
		parameters: customerParameters({ options: { concurrency: 1, maxRetryWait } }),
		items,
		onError: 'continueErrorOutput',
	});
}

/** The error output's items: the last output (after Already Created, with an Idempotency Key). */
const errorsOf = (result: RunResult) =>
	result.outputs[result.outputs.length - 1].map(
		(item) => item.json.error as { message: string; description?: string },
	);
const hintsOf = (result: RunResult) => (result.taskData?.hints ?? []).map((hint) => hint.message);

/** Nothing in the run says the outcome is unknown, offers a resend code or says it retried. */
function expectCertainlyNotCreated(result: RunResult): void {
	const text = JSON.stringify(result.outputs[1]);
	expect(text).not.toMatch(/outcome unknown|resend code|Retried for/i);
	expect(everythingVisible(result)).not.toContain(WAY_KEY);
}

describe('a create answered with a redirect', () => {
	test.each(REDIRECT_STATUSES)(
		'HTTP %i to another origin: not followed, the target named without its query, nothing sent there',
		async (status) => {
			const moved = await server();
			const service = await server(
				redirectTo(status, `${moved.origin}${API}/create-customer?api_token=t0ken`),
			);
			const result = await createCustomers(`${service.origin}${API}`, PEOPLE.slice(0, 1));

			expect(result.outputs[0]).toEqual([]);
			const [error] = errorsOf(result);
			expect(error.message).toBe(
				`The service answered create-customer with a redirect (HTTP ${status}) to ${moved.origin}${API}/create-customer: nothing was created`,
			);
			expect(error.description).toContain(
				`set the Base URL in the credential to ${moved.origin}${API} and run the item again`,
			);
			expect(JSON.stringify(result.outputs[1])).not.toContain('t0ken');
			expect(moved.received).toEqual([]);
			expect(service.received).toHaveLength(1);
			expect(service.received[0]).toMatchObject({
				method: 'POST',
				authorization: `Bearer ${WAY_KEY}`,
			});
			expectCertainlyNotCreated(result);
		},
	);

	test.each(REDIRECT_STATUSES)(
		'HTTP %i to the same origin: not followed either, sent once',
		async (status) => {
			const service = await server(redirectTo(status, `/version-2${API}/create-customer`));
			const result = await createCustomers(`${service.origin}${API}`, PEOPLE.slice(0, 1));

			const [error] = errorsOf(result);
			expect(error.message).toBe(
				`The service answered create-customer with a redirect (HTTP ${status}) to ${service.origin}/version-2${API}/create-customer: nothing was created`,
			);
			expect(service.received.map(({ url }) => url)).toEqual([`${API}/create-customer`]);
			expectCertainlyNotCreated(result);
		},
	);

	test('a redirect without a Location says so', async () => {
		const service = await server(() => ({ status: 302 }));
		const result = await createCustomers(`${service.origin}${API}`, PEOPLE.slice(0, 1));
		expect(errorsOf(result)[0].message).toBe(
			'The service answered create-customer with a redirect (HTTP 302) without saying where to: nothing was created',
		);
		expect(service.received).toHaveLength(1);
	});

	test('an invoice with an Idempotency Key gives its key back: the next delivery is sent', async () => {
		const moved = await server(() => ({
			status: 200,
			body: { invoice_id: 'inv_1', status: 'sent', download_url: 'https://files.invalid/x.pdf' },
		}));
		const service = await server(redirectTo(301, `${moved.origin}${API}/create-invoice`));
		const run = async (baseUrl: string) =>
			await runInvoiceService({
				credentials: { baseUrl, apiKey: WAY_KEY },
				parameters: invoiceParameters({ options: { idempotencyKey: 'order-43' } }),
				items: [{}],
				onError: 'continueErrorOutput',
				nodeId: 'way-key-node',
			});
		const first = await run(`${service.origin}${API}`);
		expect(errorsOf(first)[0].message).toMatch(/redirect \(HTTP 301\)/);
		const second = await run(`${moved.origin}${API}`);
		expect(second.outputs[0].map((item) => item.json.invoice_id)).toEqual(['inv_1']);
		expect(moved.received).toHaveLength(1);
	});
});

describe('a request that never left', () => {
	test('a refused port: "nothing was sent", retried within Max Retry Wait, never an unknown outcome', async () => {
		const port = await refusedPort();
		const result = await createCustomers(`http://127.0.0.1:${port}${API}`, PEOPLE.slice(0, 1), 2);
		const [error] = errorsOf(result);
		expect(error.message).toBe(
			`Cannot reach the service at 127.0.0.1:${port} (connection refused): check the Base URL and that the service is up`,
		);
		expect(error.description).toMatch(
			/Nothing was sent.*Retried for \d+ s \(Max Retry Wait: 2 s\)/,
		);
		expect(JSON.stringify(result.outputs[1])).not.toMatch(/outcome unknown|resend code/i);
	});

	test('a host that does not exist fails at once, and so does every other item of the run', async () => {
		const result = await createCustomers(`https://no-such-app.invalid${API}`);
		const errors = errorsOf(result);
		expect(errors.map(({ message }) => message)).toEqual([
			'Cannot find the host no-such-app.invalid: check the Base URL in the credential',
			'Not sent: cannot find the host no-such-app.invalid: check the Base URL in the credential',
			'Not sent: cannot find the host no-such-app.invalid: check the Base URL in the credential',
		]);
		expect(errors[0].description).toMatch(/ENOTFOUND.*Nothing was sent.*does not retry/);
		expect(hintsOf(result)).toContainEqual(
			'2 item(s) were not sent: cannot find the host no-such-app.invalid: check the Base URL in the credential.',
		);
		expect(hintsOf(result).join(' ')).not.toMatch(/retried/);
		expectCertainlyNotCreated(result);
	});

	test.each<[Certificate, RegExp]>([
		['self', /is not from an authority this machine trusts \(it is self-signed\)/],
		['leaf', /is not from an authority this machine trusts \(its issuer is unknown here\)/],
		['expired', /has expired/],
	])(
		'a certificate refused (%s): named, nothing sent, no retry, the other items not sent',
		async (certificate, words) => {
			const service = await server(undefined, { certificate });
			const result = await createCustomers(`${service.origin}${API}`);
			const errors = errorsOf(result);
			expect(errors[0].message).toMatch(
				new RegExp(`^The certificate of 127\\.0\\.0\\.1:\\d+ ${words.source}$`),
			);
			expect(errors[0].description).toMatch(
				/^No secure connection was made, nothing was sent: .*before any data was sent/,
			);
			if (certificate !== 'expired') {
				expect(errors[0].description).toContain('NODE_EXTRA_CA_CERTS');
				expect(errors[0].description).toMatch(/every worker/);
			}
			expect(errors.slice(1).map(({ message }) => message)).toEqual([
				expect.stringMatching(/^Not sent: the certificate of 127\.0\.0\.1:\d+ [^:]*$/),
				expect.stringMatching(/^Not sent: the certificate of /),
			]);
			expect(service.received).toEqual([]);
			expect(service.connections()).toBe(1);
			expectCertainlyNotCreated(result);
		},
	);
});

describe('a private CA this machine trusts (as NODE_EXTRA_CA_CERTS makes it)', () => {
	// tls.setDefaultCACertificates is what NODE_EXTRA_CA_CERTS amounts to, for this process only, undone after.
	const defaults = tls.getCACertificates('default');
	beforeAll(() => tls.setDefaultCACertificates([...defaults, readFileSync(CA_FILE, 'utf8')]));
	afterAll(() => tls.setDefaultCACertificates(defaults));

	test('a certificate it issued works: the customers are created, with the key', async () => {
		const service = await server(undefined, { certificate: 'leaf' });
		const result = await createCustomers(`${service.origin}${API}`, PEOPLE.slice(0, 2));
		expect(errorsOf(result)).toEqual([]);
		expect(result.outputs[0].map((item) => item.json.email)).toEqual([
			'way1@example.com',
			'way2@example.com',
		]);
		expect(service.received.map(({ authorization }) => authorization)).toEqual([
			`Bearer ${WAY_KEY}`,
			`Bearer ${WAY_KEY}`,
		]);
	});

	test.each<[Certificate, string]>([
		['other', 'is for another name'],
		['expired', 'has expired'],
	])('its certificate %s is still refused: %s, nothing sent', async (certificate, words) => {
		const service = await server(undefined, { certificate });
		const result = await createCustomers(`${service.origin}${API}`, PEOPLE.slice(0, 1));
		expect(errorsOf(result)[0].message).toMatch(
			new RegExp(`^The certificate of 127\\.0\\.0\\.1:\\d+ ${words}$`),
		);
		expect(service.received).toEqual([]);
		expectCertainlyNotCreated(result);
	});
});

describe('a secret in the Base URL', () => {
	test('a user name and password are refused, naming the Base URL, never printed, nothing sent', async () => {
		const service = await server();
		const baseUrl = service.origin.replace('://', '://invoice-admin:pa55-w0rd@') + API;
		const result = await createCustomers(baseUrl, PEOPLE.slice(0, 2));
		const errors = errorsOf(result);
		expect(errors).toHaveLength(2);
		// The title cut at 160 characters (helpers/title.ts), the whole message first in the description.
		const whole = `The Base URL "${service.origin}${API}" contains a user name or password (before the "@"): remove it. The node sends only the API Key, as a Bearer header; a user name and password in the address would replace it`;
		expect(errors[0].message).toBe(
			`The Base URL "${service.origin}${API}" contains a user name or password (before the "@"): remove it…`,
		);
		expect(errors[0].description).toBe(
			`${whole}\n\nNothing was sent. Correct the Base URL in the Invoice Service API credential.`,
		);
		expect(service.received).toEqual([]);
		const visible = everythingVisible(result);
		expect(visible).not.toContain('pa55-w0rd');
		expect(visible).not.toContain('invoice-admin');
	});

	test('a download_url with a user name and password is not fetched, and not printed', async () => {
		const files = await server(() => ({ status: 200, body: {} }));
		const secretUrl = files.origin.replace('://', '://files:s3cr3t@') + '/inv_1.pdf?sig=abc';
		const service = await server(() => ({
			status: 200,
			body: { invoice_id: 'inv_1', status: 'sent', download_url: secretUrl },
		}));
		const result = await runInvoiceService({
			credentials: { baseUrl: `${service.origin}${API}`, apiKey: WAY_KEY },
			parameters: invoiceParameters({ options: { downloadPdf: true } }),
			items: [{}],
			onError: 'continueErrorOutput',
		});
		const [error] = errorsOf(result);
		expect(error.message).toBe(
			`Invoice inv_1 was created, but its PDF could not be downloaded: the service's download_url carries a user name or password, which the node never sends`,
		);
		expect(error.description).toContain(
			`The download_url was ${files.origin}/inv_1.pdf (shown without them).`,
		);
		expect(files.received).toEqual([]);
		const visible = JSON.stringify(result.outputs);
		expect(visible).not.toContain('s3cr3t');
		expect(visible).not.toContain('sig=abc');
	});
});
