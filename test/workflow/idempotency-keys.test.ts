import { createHash, randomUUID } from 'node:crypto';

import nock from 'nock';
import {
	sleep,
	type ICheckProcessedContextData,
	type IDataObject,
	type IExecuteFunctions,
} from 'n8n-workflow';

import {
	IdempotencyKeys,
	keysProcess,
	type KeysProcess,
} from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { systemClock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { keysProcessWith, type TimingChange } from '../support/keyed-node';
import { readKeySettings } from '../../nodes/InvoiceService/actions/keys.descriptions';
import { deduplicator } from '../support/harness/run-node';
import {
	API,
	ORIGIN,
	customerParameters,
	runInvoiceService as runInvoiceServiceIn,
	type InvoiceServiceRun,
} from '../support/invoice-service';

// The three states of an Idempotency Key (in flight, created, outcome unknown) and the lock that makes their
// changes atomic across n8n processes, on n8n's processed-data store (in memory here, with the database's
// read-then-write window and its one atomic step, the first INSERT of a row). Another process is played by
// writing its entries into the store directly. About 10 s.

const WORKFLOW = 'harness-workflow'; // the harness's workflow id
const hash = (value: string) => createHash('md5').update(value).digest('base64');
const nodeRow = (nodeId: string) => `${WORKFLOW} n:${nodeId}`;
const lockRow = `${WORKFLOW} `;
const entriesOf = (nodeId: string) => deduplicator.rows.get(nodeRow(nodeId)) ?? [];
const holds = (nodeId: string, entry: string) => entriesOf(nodeId).includes(hash(entry));
/** Another process's entry in this node's row. */
const put = (nodeId: string, entry: string) =>
	deduplicator.rows.set(nodeRow(nodeId), [...entriesOf(nodeId), hash(entry)]);
const drop = (nodeId: string, entry: string) =>
	deduplicator.rows.set(
		nodeRow(nodeId),
		entriesOf(nodeId).filter((value) => value !== hash(entry)),
	);

/** A key's state as keyStore.ts keeps it: which of its two entries (`claim:`, `open:`) the node's row holds. */
type KeyState = 'flight' | 'created' | 'unknown' | 'none';
const ENTRIES: Record<KeyState, string[]> = {
	flight: ['claim:', 'open:'],
	created: ['claim:'],
	unknown: ['open:'],
	none: [],
};
function stateOf(nodeId: string, key: string): KeyState {
	const claimed = holds(nodeId, `claim:${key}`);
	const open = holds(nodeId, `open:${key}`);
	return claimed ? (open ? 'flight' : 'created') : open ? 'unknown' : 'none';
}
/** Another process puts a key in a state. */
function setState(nodeId: string, key: string, state: KeyState): void {
	for (const prefix of ENTRIES.flight) drop(nodeId, prefix + key);
	for (const prefix of ENTRIES[state]) put(nodeId, prefix + key);
}

/** Runs `change` at a moment no process holds the workflow's lock (in the same tick: nobody takes it between). */
async function whenUnlocked(change: () => void): Promise<void> {
	while (deduplicator.rows.has(lockRow)) await sleep(1);
	change();
}

/**
 * The process the node's keys run in: a new one for each test (its own stores and lock turns), with the system's
 * clock and the node's timings unless the test gives others.
 */
let keysIn: KeysProcess = keysProcess();
const useTiming = (change: TimingChange) => (keysIn = keysProcessWith(change));
const runInvoiceService = async (run: InvoiceServiceRun) =>
	await runInvoiceServiceIn({ keys: keysIn, ...run });
afterEach(() => {
	nock.cleanAll();
	deduplicator.clear();
	keysIn = keysProcess();
});

/**
 * A create-customer service: each create of event N answers `status(N, times seen)`, after `delayMs`; counts the
 * creates.
 */
function service(status: (event: number, seen: number) => number = () => 200, delayMs = 0) {
	const seen: number[] = [];
	const created: number[] = [];
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(100)
		.delay(delayMs)
		.reply((_uri, body) => {
			const event = Number(/\d+/.exec((body as IDataObject).email as string)![0]);
			const answer = status(event, seen.filter((value) => value === event).length);
			seen.push(event);
			if (answer !== 200) return [answer, { status: 'error', message: `refused ${event}` }];
			created.push(event);
			return [200, { status: 'success', response: { id: `cust_${event}`, name: 'Ada' } }];
		});
	return { seen, created };
}

const event = (n: number) => ({
	first: 'Ada',
	last: 'Lovelace',
	email: `ada${n}@example.com`,
	eventId: `event-${n}`,
});
const keyed = (
	nodeId: string,
	items: IDataObject[],
	extra: Partial<InvoiceServiceRun> & { options?: IDataObject } = {},
): InvoiceServiceRun => ({
	parameters: customerParameters({
		options: { idempotencyKey: '={{ $json.eventId }}', ...extra.options },
	}),
	items,
	nodeId,
	...extra,
});
/** The little of an execution context IdempotencyKeys uses, over the same store (for calls without a run). */
function contextOf(nodeId: string, parents: IDataObject[] = []): IExecuteFunctions {
	const node = {
		id: nodeId,
		name: 'Create customer',
		parameters: { options: { idempotencyKey: 'k' } },
	};
	const data = { workflow: { id: WORKFLOW }, node } as unknown as ICheckProcessedContextData;
	return {
		getNode: () => node,
		getWorkflow: () => ({ id: WORKFLOW }),
		getParentNodes: () => parents,
		getChildNodes: () => [],
		helpers: {
			checkProcessedAndRecord: async (items, scope, options) =>
				await deduplicator.checkProcessedAndRecord(items, scope, data, options),
			removeProcessed: async (items, scope) =>
				await deduplicator.removeProcessed(items, scope, data),
			clearAllProcessedItems: async (scope) =>
				await deduplicator.clearAllProcessedItems(scope, data),
			getProcessedDataCount: async (scope) => await deduplicator.getProcessedDataCount(scope, data),
		} as Partial<IExecuteFunctions['helpers']>,
	} as unknown as IExecuteFunctions;
}
const errorOf = (item: { json: IDataObject }) => item.json.error as IDataObject;
/** The resend codes an error's words give ("enter <code> in Options → Resend Unknown Outcomes Of"), in order. */
const codesIn = (text: unknown) =>
	[...String(text).matchAll(/enter ([2-9A-Z]{8}) in Options → Resend Unknown Outcomes Of/g)].map(
		(match) => match[1],
	);
const hintsOf = (run: { taskData?: { hints?: Array<{ message: string }> } }) =>
	(run.taskData?.hints ?? []).map((hint) => hint.message).join('\n');
/** An earlier recovery's code, still in the option. */
const LEFT_ON = 'K7QM2XR9';

describe('three states per key', () => {
	it('two items of one run with one key: the second is Already Created "earlier in this run"', async () => {
		const nodeId = randomUUID();
		const { created } = service();
		const run = await runInvoiceService(keyed(nodeId, [event(1), event(1)]));
		expect(created).toEqual([1]);
		expect(run.outputs[1].map((item) => item.json.message)).toEqual([
			'Already created through this node earlier in this run (same Idempotency Key): not sent again.',
		]);
		const again = await runInvoiceService(keyed(nodeId, [event(1)]));
		expect(again.outputs[1][0].json.message).toMatch(/in an earlier execution/);
		expect(stateOf(nodeId, 'event-1')).toBe('created');
	});

	it('an unknown outcome fails the re-delivery on the error output, naming the key and the way on', async () => {
		const nodeId = randomUUID();
		const { seen } = service((_event, times) => (times === 0 ? 500 : 200));
		const first = await runInvoiceService(
			keyed(nodeId, [event(2)], { onError: 'continueErrorOutput' }),
		);
		expect(stateOf(nodeId, 'event-2')).toBe('unknown');
		const [code] = codesIn(errorOf(first.outputs[2][0]).description);
		expect(code).toMatch(/^[2-9A-Z]{8}$/);

		const again = await runInvoiceService(
			keyed(nodeId, [event(2)], { onError: 'continueErrorOutput' }),
		);
		expect(seen).toEqual([2]);
		// Outputs: Created, Already Created, error output.
		expect(again.outputs[0]).toEqual([]);
		expect(again.outputs[1]).toEqual([]);
		const error = errorOf(again.outputs[2][0]);
		expect(error.message).toBe(
			'Item 0: the outcome of the create with Idempotency Key "event-2" is unknown: the service may or may not have the record',
		);
		expect(error.description).toBe(
			'Not sent, so that it is not created twice. Check in the service whether the record exists: if it does, the event is done; if it does not, enter the key\'s resend code in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow. The code is in an earlier execution of this event: the error of the one that sent it without an answer (the item\'s "outcome unknown" error), or of one that gave up waiting for it (or its warning, for an item it never reached).',
		);
		// The re-delivery's check took out what it added: still unknown with its code, nothing more.
		expect(stateOf(nodeId, 'event-2')).toBe('unknown');
		expect([...entriesOf(nodeId)].sort()).toEqual(
			[hash('open:event-2'), hash(`code:${code} event-2`)].sort(),
		);
	});

	it('an unknown key is taken over only with its own resend code, which it then no longer has', async () => {
		// Called directly: the option (Options → Resend Unknown Outcomes Of) is wired in the node's descriptions.
		const nodeId = randomUUID();
		const keys = IdempotencyKeys.of(contextOf(nodeId), readKeySettings({}), keysIn);
		setState(nodeId, 'event-12', 'unknown');
		put(nodeId, 'code:23456789 event-12');
		expect(await keys.claim('event-12', 0, { resendCodes: [] })).toEqual({ state: 'unknown' });
		expect(await keys.claim('event-12', 0, { resendCodes: [LEFT_ON] })).toEqual({
			state: 'unknown',
		});
		expect(holds(nodeId, `code:${LEFT_ON} event-12`)).toBe(false);
		const taken = await keys.claim('event-12', 0, { resendCodes: [LEFT_ON, '23456789'] });
		expect(taken).toMatchObject({ state: 'new', resent: '23456789' });
		expect(stateOf(nodeId, 'event-12')).toBe('flight');
		expect(holds(nodeId, 'code:23456789 event-12')).toBe(false);
		// Its create ends unknown again: a new code, and the one used no longer takes it over.
		if (taken.state === 'new') await taken.claim.unknown('ABCDEFGH');
		expect(await keys.claim('event-12', 1, { resendCodes: ['23456789'] })).toEqual({
			state: 'unknown',
		});
		const again = await keys.claim('event-12', 1, { resendCodes: ['ABCDEFGH'] });
		expect(again).toMatchObject({ state: 'new', resent: 'ABCDEFGH' });
		if (again.state === 'new') await again.claim.created();
		expect(await keys.claim('event-12', 2, { resendCodes: ['ABCDEFGH'] })).toEqual({
			state: 'created',
			where: 'this run',
		});
		// Each code's use went with its entry (a use matters only while its code entry is there): the created key is
		// its one entry, and nothing else of it stays to take up History Size.
		expect(entriesOf(nodeId)).toEqual([hash('claim:event-12')]);
	});

	it('issue 35, a key: a code left in the option never sends a later unknown key again; its own code does, once', async () => {
		const nodeId = randomUUID();
		// Event 20: HTTP 500 twice (nothing created), then created.
		const { seen, created } = service((_event, times) => (times < 2 ? 500 : 200));
		const options = (codes: string) => ({ options: { resendUnknownOf: codes } });
		const first = await runInvoiceService(keyed(nodeId, [event(20)], options(LEFT_ON)));
		expect(first.status).toBe('error');
		const [code] = codesIn(first.error?.description);
		expect(code).toMatch(/^[2-9A-Z]{8}$/);
		expect(code).not.toBe(LEFT_ON);
		expect(stateOf(nodeId, 'event-20')).toBe('unknown');

		// A re-delivery and a Retry of the failed execution, the option as it was: nothing sent.
		const redelivered = await runInvoiceService(keyed(nodeId, [event(20)], options(LEFT_ON)));
		expect(redelivered.status).toBe('error');
		const retried = await first.retry();
		expect(retried.status).toBe('error');
		expect(codesIn(retried.error?.description)).toContain(code);
		expect(seen).toEqual([20]);

		// Its code entered (the old one beside it): the re-delivery takes the key over and sends it, which ends
		// unknown again (500), with a new code.
		const resent = await runInvoiceService(
			keyed(nodeId, [event(20)], options(`${LEFT_ON}, ${code}`)),
		);
		expect(seen).toEqual([20, 20]);
		expect(String(resent.error?.description)).toContain(
			`1 item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: item 0 (code ${code}).`,
		);
		const [newCode] = codesIn(resent.error?.description);
		expect([LEFT_ON, code]).not.toContain(newCode);

		// The codes left in the option: not sent again.
		const leftOn = await runInvoiceService(
			keyed(nodeId, [event(20)], options(`${LEFT_ON}, ${code}`)),
		);
		expect(leftOn.status).toBe('error');
		expect(seen).toEqual([20, 20]);

		// Its own new code: sent once more, created; the next delivery is Already Created whatever the option holds.
		const done = await runInvoiceService(keyed(nodeId, [event(20)], options(newCode)));
		expect(done.status).toBe('success');
		expect(created).toEqual([20]);
		expect(hintsOf(done)).toContain(`item 0 (code ${newCode})`);
		const later = await runInvoiceService(keyed(nodeId, [event(20)], options(newCode)));
		expect(later.outputs[1]).toHaveLength(1);
		expect(seen).toEqual([20, 20, 20]);
		expect(entriesOf(nodeId)).toEqual([hash('claim:event-20')]);
	});

	it('a refusal for sure releases the key: nothing of it stays in the store', async () => {
		const nodeId = randomUUID();
		service(() => 400);
		await runInvoiceService(keyed(nodeId, [event(3)], { onError: 'continueRegularOutput' }));
		expect(entriesOf(nodeId)).toEqual([]);
	});

	it("a key in flight in another process: the delivery waits and follows that process's outcome", async () => {
		const nodeId = randomUUID();
		const { created } = service();
		useTiming({ flight: { pollMinMs: 20, pollMaxMs: 50 } });
		setState(nodeId, 'event-4', 'flight');
		setState(nodeId, 'event-5', 'flight');
		const run = runInvoiceService(
			keyed(nodeId, [event(4), event(5)], { options: { concurrency: 2 } }),
		);
		await sleep(300);
		// The other process, holding the lock as it would: event 4 created, event 5 refused (released).
		await whenUnlocked(() => {
			setState(nodeId, 'event-4', 'created');
			setState(nodeId, 'event-5', 'none');
		});
		const { outputs } = await run;
		expect(outputs[1].map((item) => item.json.idempotencyKey)).toEqual(['event-4']);
		expect(outputs[0].map((item) => item.json.id)).toEqual(['cust_5']);
		expect(created).toEqual([5]);
	});

	it('a key still in flight after the wait fails as unknown, and is marked unknown for the next delivery', async () => {
		const nodeId = randomUUID();
		const { seen } = service();
		// Wait = Max Retry Wait (0) + Timeout (1 s) + margin (0).
		useTiming({ flight: { marginMs: 0, pollMinMs: 50, pollMaxMs: 100, queryDelayMs: 0 } });
		setState(nodeId, 'event-6', 'flight');
		const started = Date.now();
		const run = await runInvoiceService(
			keyed(nodeId, [event(6)], {
				onError: 'continueErrorOutput',
				options: { maxRetryWait: 0, timeout: 1000 },
			}),
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
		const error = errorOf(run.outputs[2][0]);
		expect(error.message).toMatch(/"event-6" is unknown/);
		expect(stateOf(nodeId, 'event-6')).toBe('unknown');
		expect(seen).toEqual([]);
		// The node gave up waiting: it gave the unknown outcome a resend code, which takes it over.
		const [code] = codesIn(error.description);
		expect(holds(nodeId, `code:${code} event-6`)).toBe(true);
		const resent = await runInvoiceService(
			keyed(nodeId, [event(6)], { options: { resendUnknownOf: code } }),
		);
		expect(resent.status).toBe('success');
		expect(seen).toEqual([6]);
		expect(stateOf(nodeId, 'event-6')).toBe('created');
	});
});

describe("a key claimed ahead that outlives another process's wait", () => {
	it('made unknown by that process meanwhile, its create succeeds: the key ends created, not absent', async () => {
		const nodeId = randomUUID();
		// Wait = Max Retry Wait (0) + Timeout (1 s) + margin (0); each create takes 0.6 s, one at a time, so item 2,
		// claimed ahead at the start, is settled 1.8 s after its claim.
		useTiming({ flight: { marginMs: 0, pollMinMs: 50, pollMaxMs: 100, queryDelayMs: 0 } });
		const { created } = service(undefined, 600);
		const items = [event(500), event(501), event(502)];
		const run = runInvoiceService(
			keyed(nodeId, items, { options: { concurrency: 1, maxRetryWait: 0, timeout: 1000 } }),
		);
		// Another process waited 1 s for event-502 in flight, then gave up on it: unknown (its claim entry out).
		await sleep(1100);
		expect(stateOf(nodeId, 'event-502')).toBe('flight');
		await whenUnlocked(() => setState(nodeId, 'event-502', 'unknown'));
		const done = await run;
		expect(done.error).toBeUndefined();
		expect(created).toEqual([500, 501, 502]);
		expect(items.map(({ eventId }) => stateOf(nodeId, eventId))).toEqual([
			'created',
			'created',
			'created',
		]);
	});
});

describe('keys claimed ahead of a stalled run', () => {
	it('are given back once held too long without their turn, and claimed again at it: each created once', async () => {
		const nodeId = randomUUID();
		// Held at most 0.6 s ahead; each create takes 0.4 s, one at a time: item 5 has its turn after 2 s.
		useTiming({ ahead: { heldMs: 600, checkMs: 100 } });
		const { created } = service(undefined, 400);
		const items = Array.from({ length: 6 }, (_, n) => event(600 + n));
		const run = runInvoiceService(keyed(nodeId, items, { options: { concurrency: 1 } }));
		await sleep(250);
		// Claimed ahead at the start.
		expect(stateOf(nodeId, 'event-605')).toBe('flight');
		await sleep(1000);
		// 1.25 s in: given back, so that another delivery of event-605 would be sent, not kept waiting.
		expect(stateOf(nodeId, 'event-605')).toBe('none');
		const done = await run;
		expect(done.error).toBeUndefined();
		expect(created).toEqual([600, 601, 602, 603, 604, 605]);
		expect(items.map(({ eventId }) => stateOf(nodeId, eventId))).toEqual(Array(6).fill('created'));
	});
});

describe('keys claimed ahead and a small History Size', () => {
	it('claims at most an eighth of the History Size ahead: the key of the item being sent stays in flight', async () => {
		const nodeId = randomUUID();
		const { created } = service(undefined, 300);
		const items = Array.from({ length: 8 }, (_, n) => event(700 + n));
		const run = runInvoiceService(
			keyed(nodeId, items, { options: { concurrency: 1, historySize: 4 } }),
		);
		// Claimed (a cold start may take over 150 ms), then still in flight while it is sent: at most an eighth of
		// History Size is claimed ahead (here 1 key), so a run's claims ahead never outnumber the keys it keeps.
		for (let waited = 0; waited < 2000 && stateOf(nodeId, 'event-700') === 'none'; waited += 10)
			await sleep(10);
		await sleep(100);
		expect(stateOf(nodeId, 'event-700')).toBe('flight');
		const done = await run;
		expect(done.error).toBeUndefined();
		expect(created).toEqual(items.map((_, n) => 700 + n));
	});
});

describe('History Size counts keys (issue 51)', () => {
	it('twelve events each delivered twice, the second waiting for the first: with History Size 20 all twelve stay Already Created, nothing sent again', async () => {
		const nodeId = randomUUID();
		const { seen } = service();
		useTiming({ flight: { pollMinMs: 20, pollMaxMs: 40 } });
		const options = { options: { historySize: 20 } };
		for (let n = 0; n < 12; n++) {
			// The first delivery, in another process, is being sent; this one waits (and watches the flight) until that
			// process marks it created.
			setState(nodeId, `event-${n}`, 'flight');
			const run = runInvoiceService(keyed(nodeId, [event(n)], options));
			await sleep(150);
			await whenUnlocked(() => setState(nodeId, `event-${n}`, 'created'));
			const { outputs } = await run;
			expect(outputs[1]).toHaveLength(1);
		}
		const again = await runInvoiceService(keyed(nodeId, [event(0), event(1)], options));
		expect(again.outputs[1].map((item) => item.json.idempotencyKey)).toEqual([
			'event-0',
			'event-1',
		]);
		expect(seen.filter((n) => n < 12)).toEqual([]);
		// Nothing of the waits stays: one entry per key (before, each wait's `watched:` entry counted towards History
		// Size, and the first event was forgotten and sent again).
		expect(entriesOf(nodeId)).toHaveLength(12);
	});

	it('resend codes left in the option take no place: History Size 5 keeps the five keys created while it listed codes', async () => {
		const nodeId = randomUUID();
		const { seen } = service();
		// Every created mark checks its key's claim in again (no margin): a check of the outcomes in each batch.
		useTiming({ flight: { marginMs: 0 } });
		const options = {
			options: {
				historySize: 5,
				resendUnknownOf: `${LEFT_ON}, A2345678, B2345678, C2345678, D2345678`,
			},
		};
		const items = Array.from({ length: 5 }, (_, n) => event(800 + n));
		const first = await runInvoiceService(keyed(nodeId, items, options));
		expect(first.outputs[0]).toHaveLength(5);
		const again = await runInvoiceService(keyed(nodeId, items, options));
		expect(again.outputs[1]).toHaveLength(5);
		expect(seen).toEqual(items.map((_, n) => 800 + n));
		expect(entriesOf(nodeId)).toHaveLength(5);
	});
});

describe("a run's keys go to the store together", () => {
	it('60 keyed items: each created once, with a handful of writes of the row, not two per item', async () => {
		const nodeId = randomUUID();
		const { created } = service();
		const checks = jest.spyOn(deduplicator, 'checkProcessedAndRecord');
		const removals = jest.spyOn(deduplicator, 'removeProcessed');
		try {
			const items = Array.from({ length: 60 }, (_, n) => event(100 + n));
			const run = await runInvoiceService(keyed(nodeId, items));
			expect(run.outputs[0]).toHaveLength(60);
			expect(created).toHaveLength(60);
			const nodeWrites = [...checks.mock.calls, ...removals.mock.calls].filter(
				([, scope]) => scope === 'node',
			).length;
			// Claimed a window ahead (aheadWindow), and the marks of the items created meanwhile written together.
			expect(nodeWrites).toBeLessThan(30);
			expect(items.every(({ eventId }) => stateOf(nodeId, eventId) === 'created')).toBe(true);
		} finally {
			checks.mockRestore();
			removals.mockRestore();
		}
	});

	it.each([
		['marked at once: two writes of the row (the claim, the mark)', 0, 2],
		[
			'marked after half the least wait of another process: its claim is checked in again too',
			60_000,
			3,
		],
	])('one keyed item per execution, %s', async (_, createTakesMs, writes) => {
		const nodeId = randomUUID();
		// The create "takes" createTakesMs on the node's clock (its process's), not in the test's time.
		let skew = 0;
		keysIn = keysProcess({ clock: { ...systemClock, now: () => systemClock.now() + skew } });
		const { created } = service(() => {
			skew += createTakesMs;
			return 200;
		});
		const checks = jest.spyOn(deduplicator, 'checkProcessedAndRecord');
		const removals = jest.spyOn(deduplicator, 'removeProcessed');
		try {
			const run = await runInvoiceService(keyed(nodeId, [event(150)]));
			expect(run.outputs[0]).toHaveLength(1);
			expect(created).toEqual([150]);
			const nodeWrites = [...checks.mock.calls, ...removals.mock.calls].filter(
				([, scope]) => scope === 'node',
			).length;
			expect(nodeWrites).toBe(writes);
			expect(stateOf(nodeId, 'event-150')).toBe('created');
		} finally {
			checks.mockRestore();
			removals.mockRestore();
		}
	});

	it('a run that stops at a refusal gives back the keys it claimed ahead: their re-delivery is sent', async () => {
		const nodeId = randomUUID();
		const { created } = service((n) => (n === 203 ? 400 : 200));
		const items = Array.from({ length: 10 }, (_, n) => event(200 + n));
		const stopped = await runInvoiceService(keyed(nodeId, items, { options: { concurrency: 1 } }));
		expect(stopped.error?.message).toBe('refused 203');
		expect(created).toEqual([200, 201, 202]);
		expect(items.map(({ eventId }) => stateOf(nodeId, eventId))).toEqual([
			...Array(3).fill('created'),
			...Array(7).fill('none'),
		]);
		const again = await runInvoiceService(keyed(nodeId, items.slice(4)));
		expect(again.outputs[0]).toHaveLength(6);
		expect(created).toEqual([200, 201, 202, 204, 205, 206, 207, 208, 209]);
	});

	it('an item whose input is refused before sending gives its key back at its turn: a later item with that key is sent', async () => {
		const nodeId = randomUUID();
		const { created } = service();
		const bad = { ...event(300), email: 'not an e-mail' };
		const run = await runInvoiceService(
			keyed(nodeId, [bad, event(301), event(300)], {
				onError: 'continueRegularOutput',
				options: { concurrency: 1 },
			}),
		);
		expect(run.outputs[0][0].json.error).toBeDefined();
		expect(created).toEqual([301, 300]);
		expect(stateOf(nodeId, 'event-300')).toBe('created');
	});
});

describe('a failing store fails the item plainly', () => {
	it('issue 34: a check that fails at the History Size cap is undone too: the key is not left in flight', async () => {
		const nodeId = randomUUID();
		const { created } = service();
		// A row at the cap of a History Size of 4: a check with a limit would push out as many as it adds.
		for (let n = 0; n < 6; n++) put(nodeId, `claim:old-${n}`);
		let failures = 1;
		deduplicator.failAfterWrite = async (scope) => {
			if (scope === 'node' && failures-- > 0) throw new Error('Connection terminated unexpectedly');
		};
		const run = await runInvoiceService(
			keyed(nodeId, [event(14)], {
				onError: 'continueErrorOutput',
				options: { historySize: 4 },
			}),
		);
		expect(errorOf(run.outputs[2][0]).description).toMatch(/^Nothing was sent/);
		expect(stateOf(nodeId, 'event-14')).toBe('none');
		const again = await runInvoiceService(
			keyed(nodeId, [event(14)], { options: { historySize: 4 } }),
		);
		expect(again.outputs[0].map((item) => item.json.id)).toEqual(['cust_14']);
		expect(created).toEqual([14]);
	});

	/**
	 * n8n's database takes the node row's first write (the claims' check) and fails every later one (a removal is
	 * sent 3 times). Returns what undoes it.
	 */
	function failAfterTheClaims(): () => void {
		let checks = 0;
		deduplicator.failAfterWrite = async (scope) => {
			if (scope === 'node' && ++checks > 1) throw new Error('Connection terminated unexpectedly');
		};
		const original = deduplicator.removeProcessed.bind(deduplicator);
		deduplicator.removeProcessed = async (...args) => {
			if (args[1] === 'node') throw new Error('Connection terminated unexpectedly');
			return await original(...args);
		};
		return () => {
			deduplicator.removeProcessed = original;
		};
	}

	it("issue 34: a created mark that n8n's database refuses is a warning naming the item; the key stays in flight, never sent twice", async () => {
		const nodeId = randomUUID();
		const { created } = service();
		const restore = failAfterTheClaims();
		try {
			const run = await runInvoiceService(keyed(nodeId, [event(15)]));
			expect(run.outputs[0].map((item) => item.json.id)).toEqual(['cust_15']);
			expect(hintsOf(run)).toMatch(
				/could not mark the Idempotency Key of item 0 as created .* never sent twice/,
			);
		} finally {
			restore();
		}
		expect(stateOf(nodeId, 'event-15')).toBe('flight');
		expect(created).toEqual([15]);
	});

	it("a re-delivery found created whose claim n8n's database could not take back is a warning naming the item: its key looks in flight, nothing sent", async () => {
		const nodeId = randomUUID();
		const { created } = service();
		setState(nodeId, 'event-18', 'created');
		const restore = failAfterTheClaims();
		try {
			const run = await runInvoiceService(keyed(nodeId, [event(18)]));
			expect(run.outputs[1].map((item) => item.json.idempotencyKey)).toEqual(['event-18']);
			expect(hintsOf(run)).toMatch(
				/n8n's database failed while recording the Idempotency Key of item 0 \(not sent\): .* never sent twice/,
			);
		} finally {
			restore();
		}
		expect(stateOf(nodeId, 'event-18')).toBe('flight');
		expect(created).toEqual([]);
	});

	it("a run that stops says in its error what n8n's database did not take: a created key not marked, the refused item's key not given back", async () => {
		const nodeId = randomUUID();
		const { created } = service((n) => (n === 17 ? 400 : 200));
		const restore = failAfterTheClaims();
		try {
			const stopped = await runInvoiceService(
				keyed(nodeId, [event(16), event(17)], { options: { concurrency: 1 } }),
			);
			expect(stopped.error?.message).toBe('refused 17');
			const description = String((stopped.error as { description?: string }).description);
			expect(description).toMatch(
				/Already created in this run before it stopped: item 0 \(cust_16\)/,
			);
			expect(description).toMatch(
				/could not mark the Idempotency Key of item 0 as created .* never sent twice/,
			);
			// The refused item says its own key's give-back failed.
			expect(description).toMatch(
				/^HTTP 400: .* n8n's database could not record that nothing was created for this Idempotency Key \(Connection terminated unexpectedly\)/,
			);
		} finally {
			restore();
		}
		expect(created).toEqual([16]);
	});

	it('written, then failed (connection lost after the commit): the item fails, nothing sent; the next delivery creates one', async () => {
		const nodeId = randomUUID();
		const { created } = service();
		let failures = 1;
		deduplicator.failAfterWrite = async (scope) => {
			if (scope === 'node' && failures-- > 0) {
				throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
			}
		};
		const run = await runInvoiceService(
			keyed(nodeId, [event(7)], { onError: 'continueErrorOutput' }),
		);
		const error = errorOf(run.outputs[2][0]);
		expect(error.message).toBe("Item 0: n8n's database could not check the Idempotency Key");
		expect(error.description).toMatch(/^Nothing was sent to the service for this item\./);
		expect(error.description).toMatch(/ECONNREFUSED 127\.0\.0\.1:5432/);
		expect(JSON.stringify(error)).not.toMatch(/refused the connection/);
		// The check's own write was taken out again: no state, so the re-delivery is sent once.
		expect(entriesOf(nodeId)).toEqual([]);
		const again = await runInvoiceService(keyed(nodeId, [event(7)]));
		expect(again.outputs[0].map((item) => item.json.id)).toEqual(['cust_7']);
		expect(created).toEqual([7]);
		expect(deduplicator.rows.has(lockRow)).toBe(false);
	});
});

describe('the lock on the workflow row', () => {
	const LOCK = 'invoice-service idempotency lock';
	/** A lock as another process holds it: LOCK, its two identity entries, and `stamps` stamps. */
	const lockOf = (stamps: number) =>
		[
			LOCK,
			`${LOCK} a7`,
			`${LOCK} b9`,
			...Array.from({ length: stamps }, (_, n) => `${LOCK} ${n + 1}`),
		].map(hash);
	/** Short margins: a lease of 300 ms (watched on this process's own clock). */
	const shortLease = () => useTiming({ lock: { leaseMs: 300, breakJitterMs: 20, graceMs: 50 } });

	it('a lock watched unchanged for the lease (its holder died) is taken over, and the item is sent', async () => {
		shortLease();
		const nodeId = randomUUID();
		const { created } = service();
		deduplicator.rows.set(lockRow, lockOf(12));
		const run = await runInvoiceService(keyed(nodeId, [event(8)]));
		expect(run.outputs[0].map((item) => item.json.id)).toEqual(['cust_8']);
		expect(created).toEqual([8]);
		expect(deduplicator.rows.has(lockRow)).toBe(false);
	});

	it.each([
		[
			'stamps without LOCK (left by an earlier version after two breaks)',
			() => lockOf(20).slice(1),
		],
		['LOCK alone', () => [hash(LOCK)]],
	])(
		'a row no lock can be read from (%s) heals within the lease: the item is sent',
		async (_, row) => {
			shortLease();
			const nodeId = randomUUID();
			const { created } = service();
			deduplicator.rows.set(lockRow, row());
			const run = await runInvoiceService(keyed(nodeId, [event(12)]));
			expect(run.outputs[0].map((item) => item.json.id)).toEqual(['cust_12']);
			expect(created).toEqual([12]);
			expect(deduplicator.rows.has(lockRow)).toBe(false);
		},
	);

	it('an existing but empty row (taken by an UPDATE, not the atomic INSERT) is held only after its grace, and the item is sent', async () => {
		shortLease();
		const nodeId = randomUUID();
		const { created } = service();
		deduplicator.rows.set(lockRow, []);
		const checks: number[] = [];
		deduplicator.failAfterWrite = async (scope) => {
			if (scope === 'workflow') checks.push(deduplicator.rows.get(lockRow)?.length ?? 0);
		};
		const run = await runInvoiceService(keyed(nodeId, [event(13)]));
		expect(run.outputs[0].map((item) => item.json.id)).toEqual(['cust_13']);
		expect(created).toEqual([13]);
		// The lock's write, then the check of its identity after the grace (nothing added: still its own); the
		// next hold (the created mark) finds the row gone, and inserts.
		expect(checks.length).toBeGreaterThanOrEqual(2);
		expect(checks[1]).toBe(checks[0]);
		expect(deduplicator.rows.has(lockRow)).toBe(false);
	});

	it('another process that saw no lock writes the row just taken back with its own stamps added: the lock holds, and the next claims work', async () => {
		// The race seen in queue mode (n8n 2.41.1): process B reads "no row", process A inserts its lock, and B's check
		// finds A's row and writes back the union. A's INSERT was answered with its own array: the lock is A's.
		const nodeId = randomUUID();
		const { created } = service();
		let raced = false;
		deduplicator.failAfterWrite = async (scope) => {
			const row = deduplicator.rows.get(lockRow);
			if (scope !== 'workflow' || raced || !row) return;
			raced = true;
			row.push(...lockOf(60).slice(3));
		};
		const first = await runInvoiceService(keyed(nodeId, [event(10)]));
		expect(raced).toBe(true);
		expect(first.outputs[0].map((item) => item.json.id)).toEqual(['cust_10']);
		expect(deduplicator.rows.has(lockRow)).toBe(false);
		const next = await runInvoiceService(keyed(nodeId, [event(11), event(10)]));
		expect(next.outputs[0].map((item) => item.json.id)).toEqual(['cust_11']);
		expect(next.outputs[1].map((item) => item.json.idempotencyKey)).toEqual(['event-10']);
		expect(created).toEqual([10, 11]);
	});

	it('a live lock that stays taken: after the bounded wait the item fails, nothing sent, saying what to do', async () => {
		const nodeId = randomUUID();
		const { seen } = service();
		useTiming({ lock: { maxWaitMs: 300 } });
		deduplicator.rows.set(lockRow, lockOf(30));
		const run = await runInvoiceService(
			keyed(nodeId, [event(9)], { onError: 'continueErrorOutput' }),
		);
		const error = errorOf(run.outputs[2][0]);
		expect(error.message).toMatch(/stayed busy in n8n's database/);
		expect(error.description).toMatch(
			/^Nothing was sent to the service for this item\..*Run the item again\./,
		);
		expect(seen).toEqual([]);
		expect(deduplicator.rows.get(lockRow)).toEqual(lockOf(30));
	});

	it('a Remove Duplicates node with Scope: Workflow connected to the node: refused before anything is sent, naming it', () => {
		const removeDuplicates = (scope: string) => ({
			name: 'Remove Duplicates',
			type: 'n8n-nodes-base.removeDuplicates',
			typeVersion: 2,
			disabled: false,
			parameters: { operation: 'removeItemsSeenInPreviousExecutions', options: { scope } },
		});
		expect(() =>
			IdempotencyKeys.of(
				contextOf(randomUUID(), [removeDuplicates('workflow')]),
				readKeySettings({}),
			),
		).toThrow(
			'The Remove Duplicates node "Remove Duplicates" keeps its history for the whole workflow (Scope: Workflow), where this node keeps its Idempotency Keys',
		);
		// Scope: Node keeps its own row: no conflict.
		expect(
			IdempotencyKeys.of(contextOf(randomUUID(), [removeDuplicates('node')]), readKeySettings({})),
		).toBeDefined();
	});

	it("another node's row in the workflow scope (Remove Duplicates, Scope: Workflow): refused, and left as it was", async () => {
		shortLease();
		const nodeId = randomUUID();
		const { seen } = service();
		const history = Array.from({ length: 500 }, (_, n) => hash(`seen ${n}`));
		deduplicator.rows.set(lockRow, [...history]);
		const run = await runInvoiceService(
			keyed(nodeId, [event(10)], { onError: 'continueErrorOutput' }),
		);
		const error = errorOf(run.outputs[2][0]);
		expect(error.message).toMatch(/cannot be kept in this workflow/);
		expect(error.description).toMatch(
			/Remove Duplicates node with Scope: Workflow.*set its Scope to "Node"/,
		);
		expect(deduplicator.rows.get(lockRow)).toEqual(history);
		expect(seen).toEqual([]);
	});
});
