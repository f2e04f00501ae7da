import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import {
	fingerprintOf,
	RECORD_PROPERTY,
	RunRecord,
} from '../../nodes/InvoiceService/exactlyOnce/runRecord';
import { isToolRun } from '../../nodes/InvoiceService/actions/tool';
import { IDLE_MS, serviceIdentity, ServicePace } from '../../nodes/InvoiceService/transport/pace';

// The state the node keeps beyond one call, and how it is released (docs/how-it-works.md: "State kept beyond one call").

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const settle = async () => {
	for (let round = 0; round < 3; round++) {
		await new Promise((resolve) => setImmediate(resolve));
		collectGarbage();
	}
};

const notATool = { toolCall: false };
const contextFor = (
	executeData: object | undefined,
	type = 'n8n-nodes-invoice-service.invoiceService',
) =>
	({
		getExecuteData: () => executeData,
		getNode: () => ({ type }),
	}) as unknown as IExecuteFunctions;

describe('the record of a node run (Retry On Fail, a retried execution)', () => {
	it('is shared by the runs of one node run, and by nothing else', () => {
		const run = {};
		RunRecord.of(contextFor(run), notATool).created(0, { email: 'a' }, { id: 'cust_1' });

		expect(RunRecord.of(contextFor(run), notATool).recall(0)).toEqual({
			created: { id: 'cust_1' },
		});
		expect(RunRecord.of(contextFor(run), notATool).recall(1)).toBeUndefined();
		// Another node run (another execution or run index) has another execute data object.
		expect(RunRecord.of(contextFor({}), notATool).recall(0)).toBeUndefined();
		// A tool call never recalls: each call is a new question, whatever execute data n8n hands it.
		const tool = contextFor(run, 'n8n-nodes-invoice-service.invoiceServiceTool');
		expect(RunRecord.of(tool, { toolCall: isToolRun(tool) }).recall(0)).toBeUndefined();
		// No execute data (a context without it): nothing kept, nothing recalled.
		RunRecord.of(contextFor(undefined), notATool).created(0, { email: 'b' }, { id: 'cust_2' });
		expect(RunRecord.of(contextFor(undefined), notATool).recall(0)).toBeUndefined();
	});

	it('fingerprints a created request only when sealed; recall is by index whatever the request is now', () => {
		const run = {};
		const record = RunRecord.of(contextFor(run), notATool);
		record.created(0, { email: 'a' }, { id: 'cust_1' });
		expect(JSON.stringify(run)).not.toContain('fingerprint');
		record.seal('customer/create');
		expect(record.recall(0)).toEqual({
			created: { id: 'cust_1' },
			fingerprint: fingerprintOf('customer/create', { email: 'a' }),
		});
	});

	it('survives the execution being saved and loaded again, as JSON, without its in-memory outputs', () => {
		const run = {};
		const record = RunRecord.of(contextFor(run), notATool);
		record.created(0, { customer_id: 'c' }, { invoice_id: 'inv_1' });
		record.returned(0, { json: { invoice_id: 'inv_1' }, binary: { data: {} as never } });
		record.unknown(1, { message: 'Outcome unknown', httpCode: '500' }, 'K7QM2XR9');
		record.seal('invoice/create');
		const saved = JSON.parse(JSON.stringify(run)) as object;
		expect(JSON.stringify(saved)).not.toContain('binary');
		const loaded = RunRecord.of(contextFor(saved), notATool);
		expect(loaded.recall(0)).toMatchObject({ created: { invoice_id: 'inv_1' } });
		expect(loaded.recall(0)).not.toHaveProperty('output');
		expect(loaded.recall(1)).toEqual({
			unknown: { message: 'Outcome unknown', httpCode: '500' },
			code: 'K7QM2XR9',
		});
		// In the same process the output itself (with its binary) comes back.
		expect(RunRecord.of(contextFor(run), notATool).recall(0)).toMatchObject({
			output: { binary: { data: {} } },
		});
	});

	it('keeps a created item created when its PDF then fails; an unknown item resent starts afresh', () => {
		const run = {};
		const record = RunRecord.of(contextFor(run), notATool);
		record.created(0, {}, { invoice_id: 'inv_1' });
		record.unknown(0, { message: 'The invoice inv_1 was created, but its PDF ...' }, 'K7QM2XR9');
		expect(record.recall(0)).toEqual({ created: { invoice_id: 'inv_1' } });
		record.unknown(1, { message: 'Outcome unknown' }, 'K7QM2XR9');
		record.resend(1);
		expect(record.recall(1)).toBeUndefined();
	});

	it('ignores what it does not recognise as its own record', () => {
		const run = { [RECORD_PROPERTY]: { version: 99, items: { 0: { created: { id: 'x' } } } } };
		expect(RunRecord.of(contextFor(run), notATool).recall(0)).toBeUndefined();
	});

	it('is forgotten at once after a run with nothing failed', () => {
		const run = {};
		const record = RunRecord.of(contextFor(run), notATool);
		record.created(0, {}, { id: 'cust_1' });
		record.forget();
		expect(run).toEqual({});
		expect(RunRecord.of(contextFor(run), notATool).recall(0)).toBeUndefined();
	});

	it('is released with the execution: once n8n drops the execute data, the outputs kept in memory are collected', async () => {
		let run: object | undefined = {};
		let output: INodeExecutionData | undefined = { json: { id: 'cust_1', big: 'x'.repeat(1e6) } };
		const remembered = new WeakRef(output);
		RunRecord.of(contextFor(run), notATool).returned(0, output);
		output = undefined;
		await settle();
		expect(remembered.deref()).toBeDefined();
		run = undefined;
		await settle();
		expect(remembered.deref()).toBeUndefined();
	});

	it('fingerprints the operation and the request body, never anything else', () => {
		const body = { email: 'ada@example.com' };
		expect(fingerprintOf('customer/create', body)).toBe(
			fingerprintOf('customer/create', { ...body }),
		);
		expect(fingerprintOf('customer/create', body)).not.toBe(
			fingerprintOf('customer/create', { email: 'bob@example.com' }),
		);
		expect(fingerprintOf('customer/create', body)).not.toContain('ada');
	});
});

describe('the process-wide pace of a service and key', () => {
	// On jest's clock, with a pace of its own: what is dropped when does not hang on how busy the machine is.
	let pace: ServicePace;
	beforeEach(() => {
		jest.useFakeTimers({ now: 1_000_000 });
		pace = new ServicePace();
	});
	afterEach(() => jest.useRealTimers());

	it('names a service by origin and a digest of the key, never the key', () => {
		const identity = serviceIdentity('https://app.example.com', 'test-key-42');
		expect(identity).not.toContain('test-key-42');
		expect(identity).toMatch(/^https:\/\/app\.example\.com \S{43}$/);
		expect(serviceIdentity('https://app.example.com', 'other-key')).not.toBe(identity);
	});

	it('holds every caller of the service until the pause is over, and leaves nothing behind after it', async () => {
		const service = serviceIdentity('https://paced.example.com', 'k');
		const t0 = Date.now();
		const turn = await pace.turn(service);
		// Nothing was sent in the second before: the slowest pace, one a second, from the end of the pause.
		pace.refused(service, turn, { waitMs: 300, rateLimited: true });
		// Two other callers (other executions) of the same service and key wait for the same moment.
		const starts: number[] = [];
		const callers = [pace.turn(service), pace.turn(service)].map(async (waiting) => {
			starts.push((await waiting).at - t0);
		});
		await jest.advanceTimersByTimeAsync(299);
		expect(starts).toEqual([]);
		await jest.advanceTimersByTimeAsync(1001);
		await Promise.all(callers);
		expect(starts).toEqual([300, 1300]);
		// Another key of the same origin is not held.
		const other = serviceIdentity('https://paced.example.com', 'another key');
		expect((await pace.turn(other)).at).toBe(Date.now());
		expect(pace.activeServices()).toBe(2);

		// An entry is dropped once idle for more than IDLE_MS: the other key's from its last use, the paced one's
		// from its next slot (a second after its last start), whichever is later.
		const lastStart = Date.now();
		jest.setSystemTime(lastStart + IDLE_MS);
		expect(pace.activeServices()).toBe(2);
		jest.setSystemTime(lastStart + IDLE_MS + 1);
		expect(pace.activeServices()).toBe(1);
		jest.setSystemTime(lastStart + 1000 + IDLE_MS);
		expect(pace.activeServices()).toBe(1);
		jest.setSystemTime(lastStart + 1000 + IDLE_MS + 1);
		expect(pace.activeServices()).toBe(0);
	});

	it('after a 429, paces requests at what the service accepted instead of sending them all at once', async () => {
		const service = serviceIdentity('https://rate.example.com', 'k');
		for (let accepted = 0; accepted < 10; accepted++) {
			await pace.turn(service);
			pace.accepted(service);
		}
		const refused = await pace.turn(service);
		pace.refused(service, refused, { waitMs: 0, rateLimited: true });
		// 10 accepted in the last second: 9.5 per second from now on, one slot every 105.3 ms.
		const starts: number[] = [];
		const callers = Array.from({ length: 4 }, async () => {
			starts.push((await pace.turn(service)).at - refused.at);
		});
		await jest.advanceTimersByTimeAsync(1000);
		await Promise.all(callers);
		starts.forEach((at, k) => {
			expect(at).toBeGreaterThanOrEqual((k * 1000) / 9.5);
			expect(at).toBeLessThan((k * 1000) / 9.5 + 1);
		});
	});
});
