import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { EarlierTries } from '../../nodes/InvoiceService/actions/earlierTries';
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

const contextFor = (
	executeData: object | undefined,
	type = 'n8n-nodes-invoice-service.invoiceService',
	retryOnFail = true,
) =>
	({
		getExecuteData: () => executeData,
		getNode: () => ({ type, retryOnFail }),
	}) as unknown as IExecuteFunctions;

describe('the memory of earlier tries (Retry On Fail)', () => {
	it('is shared by the tries of one node run, and by nothing else', () => {
		const inputs: INodeExecutionData[] = [{ json: { n: 0 } }, { json: { n: 1 } }];
		const run = {};
		EarlierTries.of(contextFor(run), inputs).remember(0, { output: { json: { id: 'cust_1' } } });

		expect(EarlierTries.of(contextFor(run), inputs).recall(0)).toEqual({
			output: { json: { id: 'cust_1' } },
		});
		expect(EarlierTries.of(contextFor(run), inputs).recall(1)).toBeUndefined();
		// Another node run (another execution or run index) has another execute data object.
		expect(EarlierTries.of(contextFor({}), inputs).recall(0)).toBeUndefined();
		// The same input item given to another run: not remembered there.
		expect(EarlierTries.of(contextFor({}), [inputs[0]]).recall(0)).toBeUndefined();
		// A tool call never recalls: each call is a new question, whatever execute data n8n hands it.
		const tool = contextFor(run, 'n8n-nodes-invoice-service.invoiceServiceTool');
		expect(EarlierTries.of(tool, inputs).recall(0)).toBeUndefined();
		// Without Retry On Fail no try follows: nothing is kept.
		const once = contextFor({}, undefined, false);
		EarlierTries.of(once, inputs).remember(0, { output: { json: { id: 'cust_2' } } });
		expect(EarlierTries.of(contextFor(once.getExecuteData()), inputs).recall(0)).toBeUndefined();
	});

	it('is forgotten at once after a run with nothing failed', () => {
		const inputs: INodeExecutionData[] = [{ json: {} }];
		const run = {};
		const memory = EarlierTries.of(contextFor(run), inputs);
		memory.remember(0, { output: { json: { id: 'cust_1' } } });
		memory.forget();
		expect(EarlierTries.of(contextFor(run), inputs).recall(0)).toBeUndefined();
	});

	it('is released with the execution: once n8n drops the execute data, what was remembered is collected', async () => {
		const inputs: INodeExecutionData[] = [{ json: {} }];
		let run: object | undefined = {};
		let output: INodeExecutionData | undefined = { json: { id: 'cust_1', big: 'x'.repeat(1e6) } };
		const remembered = new WeakRef(output);
		EarlierTries.of(contextFor(run), inputs).remember(0, { output });
		output = undefined;
		await settle();
		expect(remembered.deref()).toBeDefined();
		run = undefined;
		await settle();
		expect(remembered.deref()).toBeUndefined();
	});

	it('gives an error back with the description it was first thrown with', () => {
		const inputs: INodeExecutionData[] = [{ json: {} }];
		const run = {};
		const error = Object.assign(new Error('Outcome unknown'), { description: 'first words' });
		EarlierTries.of(contextFor(run), inputs).remember(0, { error });
		error.description = 'first words\n\nAlready created in this run: ...';
		const recalled = EarlierTries.of(contextFor(run), inputs).recall(0);
		expect(recalled && 'error' in recalled && recalled.error.description).toBe('first words');
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
