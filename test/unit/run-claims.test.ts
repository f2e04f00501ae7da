// A run's keys claimed ahead (RunClaims, IdempotencyKeys: the real code) against the query-by-query model of n8n's
// store, with another process holding one of the keys in flight and never settling it (it died): the claim ahead
// gives up waiting for it and makes it unknown with a resend code of its own. That answer must reach the user.
import { IdempotencyKeys } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { RunClaims } from '../../nodes/InvoiceService/exactlyOnce/runClaims';
import { keyedNodeOver, keysProcessWith } from '../support/keyed-node';
import { hashOf, StoreModel } from '../support/store-model';

const WORKFLOW = 'ahead-workflow';
const NODE_ID = 'ahead-node';
const NODE_ROW = `${WORKFLOW} n:${NODE_ID}`;
/** Shortened: a key in flight elsewhere is waited for 400 ms; keys claimed ahead are held 200 ms. */
const TIMING = {
	flight: { marginMs: 400, pollMinMs: 20, pollMaxMs: 40, queryDelayMs: 100 },
	ahead: { heldMs: 200, checkMs: 50 },
};

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

/** A run's claims of the items with these keys, each sent, in the node of `context`. */
function claimsOf(
	context: ReturnType<typeof keyedNodeOver>['context'],
	items: string[],
): RunClaims {
	const keys = IdempotencyKeys.of(
		context,
		{ historySize: 100, createWaitMs: 0, keyField: 'Idempotency Key', purpose: 'idempotency' },
		keysProcessWith(TIMING),
	);
	return new RunClaims(keys, {
		itemCount: items.length,
		resendCodes: [],
		sends: () => true,
		keyOf: (index) => items[index],
	});
}

/** Items 0 and 1 (keys A and K); K is in flight in another process that died holding it. */
async function setUp() {
	const model = new StoreModel();
	const {
		context,
		otherStore: dead,
		otherRow: row,
	} = keyedNodeOver(model, WORKFLOW, NODE_ID, 'run');
	await expect(dead.check(row, 'K', { codes: [], expireFlight: false })).resolves.toBe('new');
	const claims = claimsOf(context, ['A', 'K']);
	const codeHeld = (code: string) => {
		const data = model.rows.get(NODE_ROW)?.data;
		return Array.isArray(data) && data.includes(hashOf(`code:${code} K`));
	};
	return { claims, codeHeld };
}

describe("a key claimed ahead that another process held past the wait (issue 42's defect 3)", () => {
	it("given back for its item's slow turn, its give-up and resend code reach the item at its turn", async () => {
		const { claims, codeHeld } = await setUp();
		const first = await claims.take(0);
		expect(first.found.state).toBe('new');
		// Item 0's create takes 1.5 s: K, claimed ahead, is held past heldMs without its turn (given back then),
		// and its claim gives up on the dead process's flight meanwhile (unknown, with a resend code of its own).
		await sleep(1500);
		const second = await claims.take(1);
		expect(second.found).toMatchObject({ state: 'unknown', code: expect.any(String) });
		const { code } = second.found as { code: string };
		expect(codeHeld(code)).toBe(true);
		if (first.found.state === 'new') claims.markCreated(0, first.found.claim);
		await claims.written();
	});

	it("never reached (the run stopped first), its give-up and resend code go to the run's warnings", async () => {
		const { claims, codeHeld } = await setUp();
		const first = await claims.take(0);
		expect(first.found.state).toBe('new');
		// The run stops at item 0 (its create failed for certain, its key given back at once): item 1 never has its
		// turn, and its claim ahead gives up on the dead process's flight meanwhile.
		if (first.found.state === 'new') await first.found.claim.giveBack();
		await sleep(1500);
		const notWritten: object = await claims.written();
		expect(notWritten).toMatchObject({
			expiredUnsent: [{ itemIndex: 1, code: expect.any(String) }],
		});
		const { code } = (notWritten as { expiredUnsent: Array<{ code: string }> }).expiredUnsent[0];
		expect(codeHeld(code)).toBe(true);
	});
});

describe("a key claimed ahead whose claim failed in n8n's database", () => {
	it("given back for its item's slow turn: the item fails with the claim's error at its turn, not a later claim's answer", async () => {
		let failChecks = 1;
		const model = new StoreModel({
			beforeQuery: async (query) => {
				if (
					query.row === NODE_ROW &&
					query.helper === 'checkProcessedAndRecord' &&
					failChecks > 0
				) {
					failChecks--;
					throw new Error('Connection terminated unexpectedly');
				}
			},
		});
		const { context } = keyedNodeOver(model, WORKFLOW, NODE_ID, 'run');
		const claims = claimsOf(context, ['A', 'B']);
		// A and B are claimed in one check, which fails: item 0 fails at once; B, claimed ahead, is given back while
		// item 0's turn goes on.
		await expect(claims.take(0)).rejects.toThrow(/could not check the Idempotency Key/);
		await sleep(400);
		await expect(claims.take(1)).rejects.toThrow(/could not check the Idempotency Key/);
		await expect(claims.written()).resolves.toMatchObject({ expiredUnsent: [] });
	});
});

describe('a key claimed ahead, never reached, whose check failed after writing', () => {
	it("may now look in flight: the run's warnings name its item (else a later delivery is told unknown with no word why, seed 11980)", async () => {
		let failAfterCommit = false;
		const model = new StoreModel({
			afterQuery: async (query) => {
				if (
					failAfterCommit &&
					query.row === NODE_ROW &&
					query.helper === 'checkProcessedAndRecord' &&
					query.step !== 'select'
				) {
					failAfterCommit = false;
					throw new Error('Connection terminated unexpectedly');
				}
			},
		});
		const { context, otherStore, otherRow } = keyedNodeOver(model, WORKFLOW, NODE_ID, 'run');
		// B was created by another execution: the run's one check of A and B mixes held and new entries.
		await expect(otherStore.check(otherRow, 'B', { codes: [], expireFlight: false })).resolves.toBe(
			'new',
		);
		await otherStore.settle(otherRow, 'B', 'created');
		failAfterCommit = true;
		const claims = claimsOf(context, ['A', 'B']);
		await expect(claims.take(0)).rejects.toThrow(/could not check the Idempotency Key/);
		// The run stops at item 0: item 1's turn never comes.
		await expect(claims.written()).resolves.toMatchObject({ leftInFlight: [1] });
	});
});
