// A delivery waiting for its key in flight in another process (IdempotencyKeys, the real code) against the
// query-by-query model of n8n's store: its give-up is tied to the flight it watched. The other process is a
// KeyStore of its own (its own lock turns), on the same store.
import { IdempotencyKeys } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { isTooLate } from '../../nodes/InvoiceService/exactlyOnce/lockErrors';
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { keyedNodeOver, keysProcessWith } from '../support/keyed-node';
import { hashOf, StoreModel } from '../support/store-model';

const WORKFLOW = 'flight-workflow';
const NODE_ID = 'flight-node';
const NODE_ROW = `${WORKFLOW} n:${NODE_ID}`;
const LOCK_ROW = `${WORKFLOW} `;
/** Shortened looks at a key in flight, and how late a query may reach the database. */
const LOOKS = { pollMinMs: 20, pollMaxMs: 40, queryDelayMs: 100 };

/** The keys of a run in the waiting process, which waits `waitMs` for a key in flight elsewhere. */
const waiterKeys = (context: Parameters<typeof IdempotencyKeys.of>[0], waitMs: number) =>
	IdempotencyKeys.of(
		context,
		{ historySize: 100, createWaitMs: 0, keyField: 'Idempotency Key', purpose: 'idempotency' },
		keysProcessWith({ flight: { ...LOOKS, marginMs: waitMs } }),
	);

function setUp() {
	/** While set, the waiting process's queries wait for it (it is paused). */
	let paused: Promise<void> | undefined;
	const model = new StoreModel({
		beforeQuery: async ({ caller }) => {
			if (caller === 'waiter') await paused;
		},
	});
	const {
		context: waiterContext,
		otherStore: holder,
		otherRow: row,
	} = keyedNodeOver(model, WORKFLOW, NODE_ID, 'waiter');
	const stateOf = (key: string) => {
		const data = model.rows.get(NODE_ROW)?.data;
		const held = new Set(Array.isArray(data) ? data : []);
		const claimed = held.has(hashOf(`claim:${key}`));
		const open = held.has(hashOf(`open:${key}`));
		if (claimed) return open ? 'flight' : 'created';
		return open ? 'unknown' : 'none';
	};
	/** Pauses the waiting process at a moment nobody holds the lock: its next query waits for `resume`. */
	const pauseWaiter = async () => {
		while (model.rows.has(LOCK_ROW)) await new Promise((resolve) => setTimeout(resolve, 1));
		let resume!: () => void;
		paused = new Promise<void>((resolve) => (resume = resolve));
		return () => {
			paused = undefined;
			resume();
		};
	};
	return { waiterContext, holder, row, stateOf, pauseWaiter };
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

describe("a delivery waiting for its key in flight in another process (issue 42's defect 1)", () => {
	it('gives up only on a flight it watched for the whole wait: a flight given back and claimed again between two of its looks is waited for anew, and its created mark (under half the margin) keeps the key created', async () => {
		const { waiterContext, holder, row, stateOf, pauseWaiter } = setUp();
		const request = { codes: [], expireFlight: false };
		// The other process claims the key (flight A).
		await expect(holder.check(row, 'K', request)).resolves.toBe('new');
		const keys = waiterKeys(waiterContext, 1000);
		const waited = keys.claim('K', 0, { resendCodes: [] });
		await sleep(700);
		// Between two of the waiter's looks: flight A is given back, and another delivery claims the key (flight B).
		const resume = await pauseWaiter();
		await holder.settle(row, 'K', 'givenBack');
		await expect(holder.check(row, 'K', request)).resolves.toBe('new');
		const claimedB = performance.now();
		resume();
		// Flight B is created 500 ms after its claim (within the wait, and well within half the margin: its mark
		// checks nothing in again), 1.2 s after the waiter first saw the key in flight.
		await sleep(500);
		await holder.settle(row, 'K', 'created', undefined, {
			noExpiryBefore: claimedB + KEYS_TIMING.flight.marginMs / 2,
			lateAfter: Infinity,
		});
		const found = await waited;
		expect(found.state).toBe('created');
		expect(stateOf('K')).toBe('created');
	});
});

describe("a holder's outcome sent after another process may have given up on its flight (issue 42)", () => {
	it('is not written: the key, given up on, taken over with its resend code and created meanwhile, stays created', async () => {
		const { waiterContext, holder, row, stateOf } = setUp();
		// The other process claims the key (flight A), and its create is refused for certain much later.
		await expect(holder.check(row, 'K', { codes: [], expireFlight: false })).resolves.toBe('new');
		const claimedA = performance.now();
		const keys = waiterKeys(waiterContext, 300);
		// A delivery here gives up on flight A (unknown, with a resend code); its user checks the service and enters
		// the code: the key is taken over and created.
		const gaveUp = await keys.claim('K', 0, { resendCodes: [] });
		expect(gaveUp).toMatchObject({ state: 'unknown', code: expect.any(String) });
		const code = (gaveUp as { code: string }).code;
		const resent = await keys.claim('K', 0, { resendCodes: [code] });
		expect(resent).toMatchObject({ state: 'new', resent: code });
		if (resent.state === 'new') await resent.claim.created();
		expect(stateOf('K')).toBe('created');
		// Flight A's give-back, sent after its last safe moment (its flight wait less the query delay): refused.
		const lateAfter = claimedA + 300 - LOOKS.queryDelayMs;
		expect(performance.now()).toBeGreaterThan(lateAfter);
		const refused = await holder
			.settle(row, 'K', 'givenBack', undefined, { noExpiryBefore: claimedA, lateAfter })
			.then(
				() => undefined,
				(error: unknown) => error,
			);
		expect(refused).toMatchObject({
			message: expect.stringMatching(/too late to be written safely/),
		});
		// Known as certainly not written (the item's error tells the user which resend code to enter by it).
		expect(isTooLate(refused)).toBe(true);
		expect(stateOf('K')).toBe('created');
		// Sent in time, the same give-back would have taken the created key out (what seeds 8435 and 9564 did).
		await holder.settle(row, 'K', 'givenBack');
		expect(stateOf('K')).toBe('none');
	});
});
