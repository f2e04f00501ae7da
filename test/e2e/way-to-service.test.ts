// The way from n8n to the service (issue 43) in a real n8n, both majors, the packed package installed as a
// community node: every create of a redirect (301, 302, 303, 307, 308, to another origin and to the same) is
// an item error naming the target, and the target receives nothing; a self-signed, an expired and a
// mismatched certificate are each named and nothing is sent, while a private CA trusted through
// NODE_EXTRA_CA_CERTS works; a refused port and a `.invalid` host say "nothing was sent" (n8n 1.x rewrites
// those errors: read from what it keeps); a password in the Base URL is refused, never printed. One workflow,
// one execution per version: an Invoice Service node per case, side by side.
import { createHash } from 'node:crypto';

import {
	CREDENTIAL_TYPE,
	N8N_VERSIONS,
	NODE_TYPE,
	createN8nHome,
	ensureN8nInstalled,
	nodeOutput,
	packPackage,
	removeHome,
	runWorkflows,
	type N8nHome,
	type WorkflowResult,
} from '../../tools/n8n';
import {
	API,
	CA_FILE,
	REDIRECT_STATUSES,
	type RecordingServer,
	WAY_KEY,
	redirectTo,
	refusedPort,
	startRecordingServer,
} from '../support/way-to-service';

const MINUTE = 60_000;
const PEOPLE = [1, 2].map((n) => ({ first: 'Ada', last: `Way${n}`, email: `way${n}@example.com` }));

interface Case {
	/** The Invoice Service node's name, and its credential's. */
	name: string;
	baseUrl: string;
}

describe.each(N8N_VERSIONS)('the way to the service in a real n8n %s', (version) => {
	let home: N8nHome;
	let result: WorkflowResult;
	const servers: Record<string, RecordingServer> = {};
	const cases: Case[] = [];
	const errors = (name: string) =>
		nodeOutput(result.run, name, 1).map(
			(item) => item.json.error as { message: string; description?: string },
		);
	const created = (name: string) => nodeOutput(result.run, name, 0).map((item) => item.json);

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		const start = async (key: string, ...args: Parameters<typeof startRecordingServer>) =>
			(servers[key] = await startRecordingServer(...args));
		await start('moved');
		for (const status of REDIRECT_STATUSES) {
			const away = await start(
				`away${status}`,
				redirectTo(status, `${servers.moved.origin}${API}/create-customer?api_token=t0ken`),
			);
			cases.push({ name: `Redirect ${status} away`, baseUrl: `${away.origin}${API}` });
			const here = await start(`here${status}`, redirectTo(status, `/v2${API}/create-customer`));
			cases.push({ name: `Redirect ${status} here`, baseUrl: `${here.origin}${API}` });
		}
		for (const certificate of ['self', 'expired', 'other', 'leaf'] as const) {
			const server = await start(certificate, undefined, { certificate });
			cases.push({ name: `Certificate ${certificate}`, baseUrl: `${server.origin}${API}` });
		}
		const port = await refusedPort();
		cases.push({ name: 'Refused port', baseUrl: `http://127.0.0.1:${port}${API}` });
		cases.push({ name: 'No such host', baseUrl: `https://no-such-app.invalid${API}` });
		const secret = await start('secret');
		cases.push({
			name: 'Password in Base URL',
			baseUrl: secret.origin.replace('://', '://invoice-admin:pa55-w0rd@') + API,
		});

		home = await createN8nHome(version, tarball);
		const credentialId = (index: number) => `credWay${String(index).padStart(9, '0')}`;
		const workflow = {
			id: 'wfWayToService01',
			name: 'Way to the service',
			nodes: [
				{ ...n8nNode('Start', 'n8n-nodes-base.manualTrigger', 1, {}), position: [0, 0] },
				{
					...n8nNode('People', 'n8n-nodes-base.set', 3.4, {
						mode: 'raw',
						jsonOutput: JSON.stringify({ people: PEOPLE }),
						options: {},
					}),
					position: [200, 0],
				},
				{
					...n8nNode('Each', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'people' }),
					position: [400, 0],
				},
				...cases.map((c, index) => ({
					...n8nNode(c.name, NODE_TYPE, 1, {
						resource: 'customer',
						operation: 'create',
						firstName: '={{ $json.first }}',
						lastName: '={{ $json.last }}',
						email: '={{ $json.email }}',
						options: { concurrency: 1, maxRetryWait: 2 },
					}),
					position: [700, index * 150],
					credentials: { [CREDENTIAL_TYPE]: { id: credentialId(index), name: c.name } },
					onError: 'continueErrorOutput',
				})),
			],
			connections: {
				Start: { main: [[{ node: 'People', type: 'main', index: 0 }]] },
				People: { main: [[{ node: 'Each', type: 'main', index: 0 }]] },
				Each: { main: [cases.map((c) => ({ node: c.name, type: 'main', index: 0 }))] },
			},
		};
		const batch = await runWorkflows(home, {
			credentials: cases.map((c, index) => ({
				id: credentialId(index),
				name: c.name,
				type: CREDENTIAL_TYPE,
				data: { baseUrl: c.baseUrl, apiKey: WAY_KEY, allowHttp: false },
			})),
			workflows: [workflow],
			// The private CA of test/fixtures/tls, trusted as the docs tell users to (reference.md).
			env: { NODE_EXTRA_CA_CERTS: CA_FILE },
		});
		result = batch.results.wfWayToService01;
	}, 25 * MINUTE);

	afterAll(async () => {
		await Promise.all(Object.values(servers).map((server) => server.close()));
		if (home) removeHome(home);
	});

	test('the run ends, every case on its own node, and the key is never printed', () => {
		expect(result.run).toBeDefined();
		for (const c of cases) {
			expect([...created(c.name), ...errors(c.name)]).toHaveLength(PEOPLE.length);
		}
		expect(`${result.stdout}\n${result.stderr}`).not.toContain(WAY_KEY);
	});

	test.each(REDIRECT_STATUSES)(
		'a create answered %i is never followed: the target named, nothing created, nothing sent there',
		(status) => {
			const away = errors(`Redirect ${status} away`);
			expect(away.map(({ message }) => message)).toEqual(
				PEOPLE.map(
					() =>
						`The service answered create-customer with a redirect (HTTP ${status}) to ${servers.moved.origin}${API}/create-customer: nothing was created`,
				),
			);
			expect(away[0].description).toContain(
				`set the Base URL in the credential to ${servers.moved.origin}${API}`,
			);
			const here = errors(`Redirect ${status} here`);
			expect(here[0].message).toBe(
				`The service answered create-customer with a redirect (HTTP ${status}) to ${servers[`here${status}`].origin}/v2${API}/create-customer: nothing was created`,
			);
			// Each item was sent once to the redirecting server, never to where it points.
			expect(servers[`away${status}`].received.map(({ method }) => method)).toEqual([
				'POST',
				'POST',
			]);
			expect(servers[`here${status}`].received.map(({ url }) => url)).toEqual([
				`${API}/create-customer`,
				`${API}/create-customer`,
			]);
			expect(JSON.stringify([away, here])).not.toMatch(/t0ken|outcome unknown|resend code/i);
		},
	);

	test('nothing ever reached the redirects’ other origin', () => {
		expect(servers.moved.received).toEqual([]);
	});

	test.each([
		['self', /is not from an authority this machine trusts \(it is self-signed\)/],
		['expired', /has expired/],
		['other', /is for another name/],
	])(
		'a certificate refused (%s): named, nothing sent, the second item not sent either',
		(name, words) => {
			const [first, second] = errors(`Certificate ${name}`);
			expect(first.message).toMatch(
				new RegExp(`^The certificate of 127\\.0\\.0\\.1:\\d+ ${words.source}$`),
			);
			expect(second.message).toMatch(/^Not sent: the certificate of 127\.0\.0\.1:\d+ /);
			expect(servers[name].received).toEqual([]);
			expect(JSON.stringify([first, second])).not.toMatch(/outcome unknown|resend code/i);
		},
	);

	test('a private CA trusted through NODE_EXTRA_CA_CERTS works', () => {
		expect(errors('Certificate leaf')).toEqual([]);
		expect(created('Certificate leaf').map((item) => item.email)).toEqual(
			PEOPLE.map(({ email }) => email),
		);
		expect(servers.leaf.received).toHaveLength(2);
		expect(servers.leaf.received[0].authorization).toBe(`Bearer ${WAY_KEY}`);
	});

	test('a refused port: nothing was sent, retried within Max Retry Wait, never an unknown outcome', () => {
		const [first] = errors('Refused port');
		expect(first.message).toMatch(
			/^Cannot reach the service at 127\.0\.0\.1:\d+ \(connection refused\): check the Base URL/,
		);
		expect(first.description).toMatch(/Nothing was sent/);
		expect(JSON.stringify(errors('Refused port'))).not.toMatch(/outcome unknown|resend code/i);
	});

	test('a host that does not exist fails at once, and the other item is not sent', () => {
		const [first, second] = errors('No such host');
		expect(first.message).toBe(
			'Cannot find the host no-such-app.invalid: check the Base URL in the credential',
		);
		expect(first.description).not.toMatch(/Retried for/);
		expect(second.message).toMatch(/^Not sent: cannot find the host no-such-app\.invalid/);
	});

	test('a password in the Base URL is refused naming the Base URL, never printed, nothing sent', () => {
		const [first] = errors('Password in Base URL');
		// The title cut at 160 characters (helpers/title.ts), the whole message first in the description.
		const whole = `The Base URL "${servers.secret.origin}${API}" contains a user name or password (before the "@"): remove it. The node sends only the API Key, as a Bearer header; a user name and password in the address would replace it`;
		expect(first.message).toBe(
			`The Base URL "${servers.secret.origin}${API}" contains a user name or password (before the "@"): remove it…`,
		);
		expect(String(first.description).startsWith(`${whole}\n\nNothing was sent.`)).toBe(true);
		expect(servers.secret.received).toEqual([]);
		expect(JSON.stringify(result.run)).not.toMatch(/pa55-w0rd|invoice-admin/);
		expect(`${result.stdout}\n${result.stderr}`).not.toMatch(/pa55-w0rd/);
	});
});

function n8nNode(name: string, type: string, typeVersion: number, parameters: object) {
	const id = createHash('sha256').update(name).digest('hex');
	return {
		id: `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-8${id.slice(17, 20)}-${id.slice(20, 32)}`,
		name,
		type,
		typeVersion,
		parameters,
	};
}
