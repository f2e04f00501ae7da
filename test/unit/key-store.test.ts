// One row's batch of the Idempotency Keys (keyStore.ts) against the query-by-query model of n8n's store, with a
// query failing before or after its commit: what each claim and outcome of the batch answers, and what the row
// holds after it.
import { KeyStore } from '../../nodes/InvoiceService/exactlyOnce/keyStore';
import type { NodeRow } from '../../nodes/InvoiceService/exactlyOnce/rowOps';
import { RowLock, systemClock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { hashOf, StoreModel, type Query } from '../support/store-model';

const WORKFLOW = 'unit-workflow';
const NODE_ID = 'unit-node';
const NODE_ROW = `${WORKFLOW} n:${NODE_ID}`;

/** A node-row check (`checkProcessedAndRecord`) failing before or after its commit: the n-th from now (1-based). */
interface Fault {
	at: number;
	when: 'before' | 'after';
}

/** The node's row, keeping 100 keys. */
const nodeRow = (helpers: unknown): NodeRow => ({
	scope: NODE_ID,
	helpers: helpers as never,
	historySize: 100,
	codesLeftIn: new Map(),
});

function setUp() {
	const fault: { next?: Fault; removals?: number } = {};
	let checks = 0;
	const isNodeCheck = (query: Query) =>
		query.row === NODE_ROW && query.helper === 'checkProcessedAndRecord' && query.step !== 'select';
	const lost = () => new Error('Connection terminated unexpectedly');
	/** The node row's writes, by helper. */
	const nodeWrites: string[] = [];
	const model = new StoreModel({
		onRun: (query) => {
			if (query.row === NODE_ROW && query.step !== 'select') nodeWrites.push(query.helper);
		},
		beforeQuery: async (query) => {
			if (query.row === NODE_ROW && query.helper === 'removeProcessed' && query.step !== 'select') {
				if (fault.removals) {
					fault.removals--;
					throw lost();
				}
			}
			if (!isNodeCheck(query) || !fault.next) return;
			checks++;
			if (fault.next.when === 'before' && checks === fault.next.at) throw lost();
		},
		afterQuery: async (query) => {
			if (isNodeCheck(query) && fault.next?.when === 'after' && checks === fault.next.at)
				throw lost();
		},
	});
	const helpers = model.helpersFor(WORKFLOW, NODE_ID);
	const store = new KeyStore(new RowLock(WORKFLOW, helpers as never), () => undefined);
	const row = nodeRow(helpers);
	const entries = () => {
		const data = model.rows.get(NODE_ROW)?.data;
		return new Set(Array.isArray(data) ? data : []);
	};
	/** A key's state as keyStore.ts keeps it. */
	const stateOf = (key: string) => {
		const held = entries();
		const claimed = held.has(hashOf(`claim:${key}`));
		const open = held.has(hashOf(`open:${key}`));
		if (claimed) return open ? 'flight' : 'created';
		return open ? 'unknown' : 'none';
	};
	const failNext = (next: Fault) => {
		checks = 0;
		fault.next = next;
	};
	/** The node row's next `count` removals fail before their commit. */
	const failRemovals = (count: number) => {
		fault.removals = count;
	};
	const hasCode = (code: string, key: string) => entries().has(hashOf(`code:${code} ${key}`));
	return { store, row, stateOf, failNext, failRemovals, hasCode, nodeWrites };
}

const request = { codes: [], expireFlight: false };

describe('one batch of claims and outcomes', () => {
	it('a created mark made soon after its claim writes one removal, no check; a late one checks its claim in first', async () => {
		const { store, row, stateOf, nodeWrites } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		nodeWrites.length = 0;
		// Its claim was sent a moment ago: nobody can have given up waiting for it.
		await store.settle(row, 'A', 'created', undefined, {
			noExpiryBefore: Number.POSITIVE_INFINITY,
			lateAfter: Number.POSITIVE_INFINITY,
		});
		expect(nodeWrites).toEqual(['removeProcessed']);
		expect(stateOf('A')).toBe('created');
		// Marked late (by default): its claim is checked in again, then `open:` taken out.
		await expect(store.check(row, 'B', request)).resolves.toBe('new');
		nodeWrites.length = 0;
		await store.settle(row, 'B', 'created');
		expect(nodeWrites).toEqual(['checkProcessedAndRecord', 'removeProcessed']);
		expect(stateOf('B')).toBe('created');
	});

	it("issue 34: claims batched with a late created mark, their check lost after its commit: the claims' entries are taken out again (nothing left in flight), the key stays created", async () => {
		const { store, row, stateOf, failNext } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		failNext({ at: 1, when: 'after' });
		// Handed over together: one batch (a late mark checks A's claim in again).
		const claimB = store.check(row, 'B', request);
		const markA = store.settle(row, 'A', 'created');
		await expect(claimB).rejects.toThrow(/Connection terminated/);
		await expect(markA).resolves.toBeUndefined();
		expect(stateOf('B')).toBe('none');
		expect(stateOf('A')).toBe('created');
	});

	it("the outcomes' check lost before its commit: the claims of the batch are answered; the created mark fails and its key stays in flight (never absent)", async () => {
		const { store, row, stateOf, failNext } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		failNext({ at: 2, when: 'before' });
		const claimB = store.check(row, 'B', request);
		const markA = store.settle(row, 'A', 'created');
		await expect(claimB).resolves.toBe('new');
		await expect(markA).rejects.toThrow(/Connection terminated/);
		expect(stateOf('B')).toBe('flight');
		expect(stateOf('A')).toBe('flight');
	});

	it('a resend code checked by a claim whose removal failed is taken out with the next removal: left in, it would let a later claim take the key over again', async () => {
		const { store, row, stateOf, failRemovals, hasCode } = setUp();
		const withCode = { codes: ['X2345678'], expireFlight: false };
		// A unknown with code X2345678; B new.
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		await store.settle(row, 'A', 'unknown', 'X2345678');
		// A taken over with its code, B claimed while that code is listed: the removal of the codes' entries fails
		// every time (3 tries). The answers stand, and the entries are still there.
		failRemovals(3);
		const [takeA, claimB] = await Promise.all([
			store.check(row, 'A', withCode),
			store.check(row, 'B', withCode),
		]);
		expect(takeA).toEqual({ taken: 'X2345678' });
		expect(claimB).toBe('new');
		expect(hasCode('X2345678', 'A')).toBe(true);
		expect(hasCode('X2345678', 'B')).toBe(true);
		// Both resent, both unknown again (new codes): this batch's removal takes the old entries out too.
		await Promise.all([
			store.settle(row, 'A', 'unknown', 'Y2345678'),
			store.settle(row, 'B', 'unknown', 'Z2345678'),
		]);
		expect(hasCode('X2345678', 'A')).toBe(false);
		expect(hasCode('X2345678', 'B')).toBe(false);
		expect([stateOf('A'), stateOf('B')]).toEqual(['unknown', 'unknown']);
		// The old code, still in the option, sends neither again: only the new codes would.
		await expect(store.check(row, 'A', withCode)).resolves.toBe('unknown');
		await expect(store.check(row, 'B', withCode)).resolves.toBe('unknown');
	});

	it('a resend code whose entry a failed removal left in cannot take its key over again once the key is unknown anew, in a process that does not know it was left in', async () => {
		const { store, row, stateOf, failRemovals, hasCode } = setUp();
		const withX = { codes: ['X2345678'], expireFlight: false };
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		await store.settle(row, 'A', 'unknown', 'X2345678');
		// Taken over with X (resent); the removal of X's entry fails every time: it stays in the row.
		failRemovals(3);
		await expect(store.check(row, 'A', withX)).resolves.toEqual({ taken: 'X2345678' });
		expect(hasCode('X2345678', 'A')).toBe(true);
		// Another process (its own left-over entries: none) makes the key unknown again, with code Y.
		const elsewhere: NodeRow = { ...row, codesLeftIn: new Map() };
		await store.settle(elsewhere, 'A', 'unknown', 'Y2345678');
		expect(hasCode('X2345678', 'A')).toBe(true);
		expect(stateOf('A')).toBe('unknown');
		// X, used once, does not send A again (before: taken over, a second create); Y does.
		await expect(store.check(elsewhere, 'A', withX)).resolves.toBe('unknown');
		await expect(
			store.check(elsewhere, 'A', { codes: ['Y2345678'], expireFlight: false }),
		).resolves.toEqual({ taken: 'Y2345678' });
	});

	it("a claims' check mixing held and new entries, lost after its commit: its keys stay as it left them, but the listed codes' entries go (left in, one would pass for a code issued for its key)", async () => {
		const { store, row, stateOf, failNext, hasCode } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		await store.settle(row, 'A', 'created');
		failNext({ at: 1, when: 'after' });
		const withCode = { codes: ['X2345678'], expireFlight: false };
		const [claimA, claimB] = await Promise.allSettled([
			store.check(row, 'A', withCode),
			store.check(row, 'B', withCode),
		]);
		expect([claimA.status, claimB.status]).toEqual(['rejected', 'rejected']);
		expect(String((claimB as PromiseRejectedResult).reason)).toMatch(
			/failed while recording Idempotency Keys, after writing them/,
		);
		expect([stateOf('A'), stateOf('B')]).toEqual(['flight', 'flight']);
		expect(hasCode('X2345678', 'A')).toBe(false);
		expect(hasCode('X2345678', 'B')).toBe(false);
	});

	it("a give-up keeps its code though an earlier look's removal of it failed: the code its error tells is in the row", async () => {
		const { store, row, stateOf, failRemovals, hasCode } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		const look = async (sign?: string) =>
			await store.check(row, 'A', {
				codes: [],
				watch: { sign },
				expireFlight: true,
				expiryCode: 'E2345678',
			});
		// The first two looks' removals fail: the give-up code their checks added stays in the row, left over.
		let sign: string | undefined;
		for (let index = 0; index < 2; index++) {
			failRemovals(3);
			const answer = await look(sign);
			if (typeof answer !== 'object' || !('flight' in answer))
				throw new Error(`not in flight: ${JSON.stringify(answer)}`);
			sign = answer.flight;
		}
		expect(hasCode('E2345678', 'A')).toBe(true);
		await expect(look(sign)).resolves.toBe('expired');
		expect(stateOf('A')).toBe('unknown');
		expect(hasCode('E2345678', 'A')).toBe(true);
	});

	it('a claim found created whose removal failed says so before its answer (its key looks in flight); one whose removal went through does not', async () => {
		const { store, row, stateOf, failRemovals } = setUp();
		await expect(store.check(row, 'A', request)).resolves.toBe('new');
		await store.settle(row, 'A', 'created', undefined, {
			noExpiryBefore: Number.POSITIVE_INFINITY,
			lateAfter: Number.POSITIVE_INFINITY,
		});
		const said: string[] = [];
		await expect(
			store.check(row, 'A', { ...request, onLeftInFlight: () => said.push('A once') }),
		).resolves.toBe('created');
		expect(said).toEqual([]);
		failRemovals(3);
		await expect(
			store.check(row, 'A', { ...request, onLeftInFlight: () => said.push('A twice') }),
		).resolves.toBe('created');
		expect(said).toEqual(['A twice']);
		expect(stateOf('A')).toBe('flight');
	});
});

describe("a holder's last writes (issue 42's defect 2)", () => {
	it('are all sent within writeMs of taking the lock, removal retries included: a removal whose tries outlast it is not sent again, and its claim says its key is left in flight', async () => {
		// Shortened: a holder writes only within 300 ms of its INSERT; each removal try fails after 200 ms (n8n's
		// pool timing out on a busy database), so a third try would be sent 400 ms in.
		const timing = { ...KEYS_TIMING.lock, writeMs: 300 };
		let lockedAt = 0;
		const sentAt: number[] = [];
		const model = new StoreModel({
			beforeQuery: async (query) => {
				if (
					query.row === NODE_ROW &&
					query.helper === 'removeProcessed' &&
					query.step === 'select'
				) {
					sentAt.push(performance.now() - lockedAt);
					await new Promise((resolve) => setTimeout(resolve, 200));
					throw new Error('timeout exceeded when trying to connect');
				}
			},
			onRun: (query) => {
				if (query.row === `${WORKFLOW} ` && query.step === 'insert') lockedAt = performance.now();
			},
		});
		const helpers = model.helpersFor(WORKFLOW, NODE_ID);
		const lock = new RowLock(WORKFLOW, helpers as never, systemClock, new Map(), timing);
		const store = new KeyStore(lock, () => undefined);
		const row = nodeRow(helpers);
		// A created, then claimed again: the claim's check adds `open:A`, which its removal must take out.
		model.rows.set(NODE_ROW, { mode: 'entries', data: [hashOf('claim:A')] });
		const said: string[] = [];
		await expect(
			store.check(row, 'A', { ...request, onLeftInFlight: () => said.push('left in flight') }),
		).resolves.toBe('created');
		expect(said).toEqual(['left in flight']);
		expect(sentAt.length).toBeGreaterThan(0);
		expect(sentAt.every((at) => at < 300)).toBe(true);
	});
});

describe('a lock another process holds', () => {
	/** A store whose workflow's lock another process holds until `release()`. */
	function heldElsewhere(maxWaitMs: number = KEYS_TIMING.lock.maxWaitMs) {
		const model = new StoreModel({});
		const lockRow = `${WORKFLOW} `;
		const lockEntries = ['invoice-service idempotency lock', 'invoice-service idempotency lock 1'];
		model.rows.set(lockRow, { mode: 'entries', data: lockEntries.map(hashOf) });
		const helpers = model.helpersFor(WORKFLOW, NODE_ID);
		const timing = { ...KEYS_TIMING.lock, maxWaitMs };
		const lock = new RowLock(WORKFLOW, helpers as never, systemClock, new Map(), timing);
		const store = new KeyStore(lock, () => undefined);
		const row = nodeRow(helpers);
		return { store, row, release: () => model.rows.delete(lockRow) };
	}
	const later = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

	it('a lock never taken fails only the changes that waited for it from the start; one that came later waits on', async () => {
		const { store, row, release } = heldElsewhere(300);
		const claimA = store.check(row, 'A', request);
		await later(150);
		let settledB = false;
		const claimB = store.check(row, 'B', request).finally(() => (settledB = true));
		await expect(claimA).rejects.toThrow(/stayed busy/);
		expect(settledB).toBe(false);
		release();
		await expect(claimB).resolves.toBe('new');
	});
});
