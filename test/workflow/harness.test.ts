import nock from 'nock';
import { NodeApiError } from 'n8n-workflow';

import {
	getBinaryBuffer,
	runNode,
	SOURCE_NODE_NAME,
	type RunOptions,
} from '../support/harness/run-node';
import { FixtureApi as FixtureApiCredential } from './fixtures/FixtureApi.credentials';
import { FixtureApi } from './fixtures/FixtureApi.node';
import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';

const BASE = 'https://fixture.example.com';

const base = (overrides: Partial<RunOptions> = {}): RunOptions => ({
	node: new FixtureApi(),
	credentialType: new FixtureApiCredential(),
	credentials: { baseUrl: BASE, apiKey: 'secret-key-123' },
	parameters: { email: '={{ $json.email }}' },
	items: [{ email: 'ada@example.com' }],
	...overrides,
});

afterEach(() => {
	nock.cleanAll();
});

describe('workflow harness (fixture node inside n8n-core WorkflowExecute)', () => {
	it('applies the generic Bearer authenticate block and resolves expressions over upstream items', async () => {
		const seen: Array<{ auth: unknown; region: unknown; body: unknown }> = [];
		const scope = nock(BASE)
			.post('/echo')
			.times(2)
			.reply(function (_uri, body) {
				seen.push({
					auth: this.req.headers.authorization,
					region: this.req.headers['x-region'],
					body,
				});
				const { email } = body as { email: string };
				return [200, { id: `id_${email.split('@')[0]}`, email }];
			});

		const result = await runNode(
			base({ items: [{ email: 'ada@example.com' }, { email: 'grace@example.com' }] }),
		);

		expect(result.error).toBeUndefined();
		expect(result.status).toBe('success');
		expect(scope.isDone()).toBe(true);
		expect(seen).toEqual([
			// region is not in the given credentials: the credential type's default ('eu') was applied
			{ auth: 'Bearer secret-key-123', region: 'eu', body: { email: 'ada@example.com' } },
			{ auth: 'Bearer secret-key-123', region: 'eu', body: { email: 'grace@example.com' } },
		]);
		expect(result.outputs).toHaveLength(1);
		expect(result.outputs[0].map((i) => i.json)).toEqual([
			{ id: 'id_ada', email: 'ada@example.com' },
			{ id: 'id_grace', email: 'grace@example.com' },
		]);
		expect(result.outputs[0].map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		// the source node really ran and fed the node under test
		expect(result.runData[SOURCE_NODE_NAME][0].data?.main[0]).toHaveLength(2);
	});

	it('matches the exact Authorization header with nock matchHeader (wrong key gets no match)', async () => {
		nock(BASE)
			.post('/echo', { email: 'ada@example.com' })
			.matchHeader('authorization', 'Bearer secret-key-123')
			.reply(200, { id: 'id_ada' });

		const ok = await runNode(base());
		expect(ok.error).toBeUndefined();
		expect(ok.outputs[0][0].json).toEqual({ id: 'id_ada' });

		nock(BASE)
			.post('/echo')
			.matchHeader('authorization', 'Bearer secret-key-123')
			.reply(200, { id: 'never' });
		const wrong = await runNode(base({ credentials: { baseUrl: BASE, apiKey: 'other' } }));
		expect(wrong.error).toBeDefined();
		expect(wrong.status).toBe('error');
	});

	it('routes a failing item to output 1 with onError continueErrorOutput, keeping good items in output 0', async () => {
		nock(BASE).post('/echo', { email: 'ada@example.com' }).reply(200, { id: 'id_ada' });
		nock(BASE)
			.post('/echo', { email: 'bad@example.com' })
			.reply(400, { message: 'E-mail not accepted' });

		const result = await runNode(
			base({
				onError: 'continueErrorOutput',
				items: [{ email: 'ada@example.com' }, { email: 'bad@example.com' }],
			}),
		);

		expect(result.status).toBe('success');
		expect(result.outputs).toHaveLength(2);
		expect(result.outputs[0].map((i) => i.json)).toEqual([{ id: 'id_ada' }]);
		expect(result.outputs[1]).toHaveLength(1);
		const [errorItem] = result.outputs[1];
		expect(errorItem.json.error).toBe('Fixture API refused bad@example.com');
		// n8n merges the upstream item into the error item
		expect(errorItem.json.email).toBe('bad@example.com');
		expect(errorItem.pairedItem).toEqual({ item: 1 });
	});

	it('keeps the error item in output 0 with onError continueRegularOutput', async () => {
		nock(BASE).post('/echo').reply(500, { message: 'boom' });

		const result = await runNode(base({ onError: 'continueRegularOutput' }));

		expect(result.status).toBe('success');
		expect(result.outputs).toHaveLength(1);
		expect(result.outputs[0][0].json).toEqual({ error: 'Fixture API refused ada@example.com' });
	});

	it('returns the thrown node error (with its fields) when the node does not continue on fail', async () => {
		nock(BASE)
			.post('/echo', { email: 'ada@example.com' })
			.reply(200, { id: 'id_ada' })
			.post('/echo', { email: 'bad@example.com' })
			// n8n-core's httpRequestWithAuthentication retries once on 401 (after preAuthentication)
			.times(2)
			.reply(401, { message: 'bad token' });

		const result = await runNode(
			base({ items: [{ email: 'ada@example.com' }, { email: 'bad@example.com' }] }),
		);

		expect(result.status).toBe('error');
		expect(result.error).toBeInstanceOf(NodeApiError);
		const error = result.error as unknown as NodeApiError;
		expect(error.message).toBe('Fixture API refused bad@example.com');
		// NodeApiError lets the response body's `message` override a `description` option
		expect(error.description).toBe('bad token');
		expect(error.httpCode).toBe('401');
		expect(error.context.itemIndex).toBe(1);
		// n8n records it too: on the task and on the run
		expect(result.taskData?.error?.message).toBe('Fixture API refused bad@example.com');
		expect(result.run.data.resultData.error?.message).toBe('Fixture API refused bad@example.com');
	});

	it('returns binary data attached with prepareBinaryData, readable as base64 and as a buffer', async () => {
		const pdf = Buffer.from('%PDF-1.4\n% fixture pdf\n%%EOF\n');
		nock(BASE).post('/echo').reply(200, { id: 'inv_1' });
		const fileScope = nock(BASE)
			.get('/file/inv_1')
			.matchHeader('authorization', 'Bearer secret-key-123')
			.reply(200, pdf, { 'content-type': 'application/pdf' });

		const result = await runNode(
			base({ parameters: { email: '={{ $json.email }}', downloadFile: true } }),
		);

		expect(result.error).toBeUndefined();
		expect(fileScope.isDone()).toBe(true);
		const [item] = result.outputs[0];
		expect(item.binary?.data).toMatchObject({
			fileName: 'inv_1.pdf',
			mimeType: 'application/pdf',
			fileExtension: 'pdf',
		});
		expect(Buffer.from(item.binary!.data.data, 'base64').equals(pdf)).toBe(true);
		expect((await getBinaryBuffer(item)).equals(pdf)).toBe(true);
	});

	it('reports missing required parameters the way n8n does (workflow issues)', async () => {
		await expect(runNode(base({ parameters: {} }))).rejects.toThrow(
			/The 'Fixture API' node has issues:[\s\S]*E-Mail/,
		);
	});
});

describe('workflow harness with the real Invoice Service node (smoke)', () => {
	it('creates a customer through the node, authenticated by the real credential', async () => {
		const scope = nock('https://app.example.com')
			.post('/api/1.1/wf/create-customer', {
				first_name: 'Ada',
				last_name: 'Lovelace',
				email: 'ada@example.com',
			})
			.matchHeader('authorization', 'Bearer live-key')
			.reply(200, { id: 'cust_1', name: 'Ada Lovelace', email: 'ada@example.com' });

		const result = await runNode({
			node: InvoiceService,
			credentialType: new InvoiceServiceApi(),
			credentials: { baseUrl: 'https://app.example.com', apiKey: 'live-key', allowHttp: false },
			parameters: {
				resource: 'customer',
				operation: 'create',
				firstName: '={{ $json.first }}',
				lastName: '={{ $json.last }}',
				email: '={{ $json.mail }}',
			},
			items: [{ first: 'Ada', last: 'Lovelace', mail: 'ada@example.com' }],
		});

		expect(result.error).toBeUndefined();
		expect(scope.isDone()).toBe(true);
		expect(result.nodeName).toBe('Invoice Service');
		expect(result.outputs[0]).toHaveLength(1);
		expect(result.outputs[0][0].json).toMatchObject({
			id: 'cust_1',
			name: 'Ada Lovelace',
			email: 'ada@example.com',
		});
		expect(result.outputs[0][0].pairedItem).toEqual({ item: 0 });
	});
});
