import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { EarlierTries } from '../../nodes/InvoiceService/actions/earlierTries';
import { serviceIdentity, servicePace } from '../../nodes/InvoiceService/transport/pace';

// The state the node keeps beyond one call, and how it is released (shared/style.md: "State that outlives one call").

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
	afterEach(() => jest.restoreAllMocks());

	it('names a service by origin and a digest of the key, never the key', () => {
		const identity = serviceIdentity('https://app.example.com', 'test-key-42');
		expect(identity).not.toContain('test-key-42');
		expect(identity).toMatch(/^https:\/\/app\.example\.com \S{43}$/);
		expect(serviceIdentity('https://app.example.com', 'other-key')).not.toBe(identity);
	});

	it('holds every caller of the service until the pause is over, and leaves nothing behind after it', async () => {
		const service = serviceIdentity('https://paced.example.com', 'k');
		const turn = await servicePace.turn(service);
		servicePace.refused(service, turn, { waitMs: 300, rateLimited: true });
		const before = Date.now();
		// Two other callers (other executions) of the same service and key wait for the same moment.
		const starts = await Promise.all([servicePace.turn(service), servicePace.turn(service)]);
		for (const start of starts) expect(start.at - before).toBeGreaterThanOrEqual(250);
		// Another key of the same origin is not held.
		const other = serviceIdentity('https://paced.example.com', 'another key');
		const otherStart = Date.now();
		await servicePace.turn(other);
		expect(Date.now() - otherStart).toBeLessThan(100);

		expect(servicePace.activeServices()).toBeGreaterThanOrEqual(2);
		// Idle for longer than the entries live: nothing is kept.
		const now = Date.now();
		jest.spyOn(Date, 'now').mockReturnValue(now + 31_000);
		expect(servicePace.activeServices()).toBe(0);
	});

	it('after a 429, paces requests at what the service accepted instead of sending them all at once', async () => {
		const service = serviceIdentity('https://rate.example.com', 'k');
		for (let accepted = 0; accepted < 10; accepted++) {
			await servicePace.turn(service);
			servicePace.accepted(service);
		}
		const refused = await servicePace.turn(service);
		servicePace.refused(service, refused, { waitMs: 0, rateLimited: true });
		// 10 accepted in the last second: about 9.5 per second from now on.
		const starts = await Promise.all(Array.from({ length: 4 }, () => servicePace.turn(service)));
		// Slots are fixed in time (about 105 ms apart from the first): a late wake-up on a busy machine delays one
		// start but never brings a later one forward, so each start is at least k slots after the first.
		const sinceFirst = starts.map((start) => start.at - starts[0].at);
		sinceFirst.forEach((elapsed, k) => expect(elapsed).toBeGreaterThanOrEqual(k * 100));
	});
});
