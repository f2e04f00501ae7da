// The credential's "Test" button as a real n8n runs it (POST /rest/credentials/test on a running `n8n start`,
// logged in as the owner), against the sandbox: the declarative test request and its rules are only
// interpreted by n8n's server, so this is the one place they are checked for real.
import { startSandbox, type Sandbox } from '../../sandbox/server';
import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	createN8nHome,
	ensureN8nInstalled,
	freePort,
	packPackage,
	removeHome,
	startN8nServer,
	testCredential,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';

const MINUTE = 60_000;

describe.each(N8N_VERSIONS)('credential Test button in a real n8n %s', (version) => {
	let home: N8nHome;
	let server: N8nServer;
	let plain: Sandbox;
	let bubble: Sandbox;

	const check = (name: string, data: Record<string, unknown>) =>
		testCredential(server, { name, type: CREDENTIAL_TYPE, data: { allowHttp: false, ...data } });

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		plain = await startSandbox();
		bubble = await startSandbox({ style: 'bubble' });
		home = await createN8nHome(version, tarball);
		server = await startN8nServer(home);
		await server.setupOwner();
	}, 25 * MINUTE);

	afterAll(async () => {
		await server?.stop();
		await Promise.all([plain?.close(), bubble?.close()]);
		if (home) removeHome(home);
	});

	test('a valid key with the app root as Base URL is accepted', async () => {
		await expect(check('root', { baseUrl: plain.rootUrl, apiKey: plain.apiKey })).resolves.toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
	});

	test('a valid key with the full /api/1.1/wf Base URL (and a trailing slash) is accepted', async () => {
		await expect(
			check('full', { baseUrl: `${plain.baseUrl}/`, apiKey: plain.apiKey }),
		).resolves.toMatchObject({ status: 'OK' });
	});

	test('the Bubble style behind /version-test is accepted', async () => {
		await expect(
			check('bubble', { baseUrl: `${bubble.rootUrl}/version-test`, apiKey: bubble.apiKey }),
		).resolves.toMatchObject({ status: 'OK' });
	});

	// n8n 1.x's request helper ignores the `except` list of ignoreHttpStatusErrors, so its Test button accepts
	// every answer (a documented limit, README "Credentials"); this pins that down so a change is noticed.
	const exactStatuses = !version.startsWith('1.');

	test(
		exactStatuses
			? 'a wrong key fails with the 401 message'
			: 'n8n 1.x: a wrong key is not detected by the Test button (documented limit)',
		async () => {
			const r = await check('wrong key', { baseUrl: plain.rootUrl, apiKey: 'not-the-right-key' });
			if (!exactStatuses) {
				expect(r.status).toBe('OK');
				return;
			}
			expect(r.status).toBe('Error');
			expect(r.message).toMatch(/API key was rejected \(HTTP 401\)/);
		},
	);

	test(
		exactStatuses
			? 'a Base URL where the service is not fails with the 404 message'
			: 'n8n 1.x: a wrong Base URL path is not detected by the Test button (documented limit)',
		async () => {
			const r = await check('wrong path', {
				baseUrl: `${plain.rootUrl}/not-the-app`,
				apiKey: plain.apiKey,
			});
			if (!exactStatuses) {
				expect(r.status).toBe('OK');
				return;
			}
			expect(r.status).toBe('Error');
			expect(r.message).toMatch(/HTTP 404/);
			expect(r.message).toMatch(/Base URL/);
		},
	);

	test('an address where nothing listens fails', async () => {
		const port = await freePort();
		const r = await check('refused', { baseUrl: `http://127.0.0.1:${port}`, apiKey: plain.apiKey });
		expect(r.status).toBe('Error');
		expect(r.message).not.toBe('');
	});

	// A pasted Base URL is read with the node's own steps (helpers/baseUrl.ts, written into the Test request's
	// URL expression).
	test('a pasted create-invoice endpoint URL with a query string and fragment is understood', async () => {
		const before = plain.stats().requests.byPath;
		const r = await check('pasted', {
			baseUrl: `${plain.baseUrl}/create-invoice?debug=1#x`,
			apiKey: plain.apiKey,
		});
		expect(r).toEqual({ status: 'OK', message: 'Connection successful!' });
		const after = plain.stats().requests.byPath;
		const sentTo = Object.keys(after).filter((path) => after[path] !== before[path]);
		expect(sentTo).toEqual(['/api/1.1/wf/create-customer']);
	});

	// The URL expression throws the node's sentence, but n8n's credential tester (1.x and 2.x alike, seen here)
	// does not pass an expression's error on: the request is left without a URL and fails as ERR_INVALID_URL.
	// What matters holds on both: the Test fails and nothing reaches the service. The node itself shows the
	// sentence (test/workflow/limits.test.ts).
	test("Bubble's Data API fails the Test before anything is sent", async () => {
		const total = plain.stats().requests.total;
		const r = await check('data api', {
			baseUrl: `${plain.rootUrl}/api/1.1/obj/customer`,
			apiKey: plain.apiKey,
		});
		expect(r.status).toBe('Error');
		expect(plain.stats().requests.total).toBe(total);
	});

	// Keys as people paste them are read by the credential's own authenticate (helpers/apiKey.ts), on every
	// version: the service's answer (400 for the empty test body, not 401) shows the key arrived bare.
	test('a key pasted with "Bearer " and a trailing line break is understood', async () => {
		const refusedBefore = plain.stats().requests.byStatus['401'] ?? 0;
		const invalidBefore = plain.stats().requests.byStatus['400'] ?? 0;
		const r = await check('pasted key', {
			baseUrl: plain.rootUrl,
			apiKey: `  Bearer ${plain.apiKey}\r\n`,
		});
		expect(r).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(plain.stats().requests.byStatus['401'] ?? 0).toBe(refusedBefore);
		expect(plain.stats().requests.byStatus['400']).toBe(invalidBefore + 1);
	});

	test('a key with a line break inside fails the Test with the API Key message, before anything is sent', async () => {
		const total = plain.stats().requests.total;
		const r = await check('broken key', { baseUrl: plain.rootUrl, apiKey: 'sandbox-key\n-1234' });
		expect(r.status).toBe('Error');
		expect(r.message).toMatch(
			/^The API Key in the Invoice Service API credential contains a line break at character 12/,
		);
		expect(r.message).not.toMatch(/Invalid character in header/);
		expect(plain.stats().requests.total).toBe(total);
	});

	test('testing creates nothing on the service', () => {
		expect(plain.stats().customers).toBe(0);
		expect(bubble.stats().customers).toBe(0);
		expect(plain.stats().requests.byStatus['401']).toBeGreaterThanOrEqual(1);
	});
});
