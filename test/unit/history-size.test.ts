// History Size counts keys (issue 51, defects 3 and 4): what else the node keeps in its row of n8n's store (the codes
// a claim checks, a code's use, a waiter's watch entries) never pushes out a key younger than History Size, and
// nothing of it stays for good. Run against the query-by-query model of n8n's store, which trims the oldest entries
// to `maxEntries` as n8n does.
import { KeyStore } from '../../nodes/InvoiceService/exactlyOnce/keyStore';
import type { ClaimRequest, NodeRow } from '../../nodes/InvoiceService/exactlyOnce/rowOps';
import {
	KEY_ENTRIES,
	WATCHED_KEYS,
	rowLimit,
} from '../../nodes/InvoiceService/exactlyOnce/rowBatch';
import {
	END_MARKS,
	endEntries,
	watchedEntry,
} from '../../nodes/InvoiceService/exactlyOnce/flightWatch';
import { RowLock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { hashOf, StoreModel } from '../support/store-model';

const WORKFLOW = 'unit-workflow';
const NODE_ID = 'unit-node';
const NODE_ROW = `${WORKFLOW} n:${NODE_ID}`;

function setUp(historySize: number) {
	const fault = { removals: 0 };
	const model = new StoreModel({
		beforeQuery: async (query) => {
			if (
				query.row === NODE_ROW &&
				query.helper === 'removeProcessed' &&
				query.step !== 'select' &&
				fault.removals > 0
			) {
				fault.removals--;
				throw new Error('Connection terminated unexpectedly');
			}
		},
	});
	const helpers = model.helpersFor(WORKFLOW, NODE_ID);
	const store = new KeyStore(new RowLock(WORKFLOW, helpers as never), () => undefined);
	const row: NodeRow = {
		scope: NODE_ID,
		helpers: helpers as never,
		historySize,
		codesLeftIn: new Map(),
	};
	const data = (): string[] => {
		const value = model.rows.get(NODE_ROW)?.data;
		return Array.isArray(value) ? value : [];
	};
	const has = (entry: string) => data().includes(hashOf(entry));
	/** A key's state as keyStore.ts keeps it. */
	const stateOf = (key: string) => {
		const claimed = has(`claim:${key}`);
		const open = has(`open:${key}`);
		if (claimed) return open ? 'flight' : 'created';
		return open ? 'unknown' : 'none';
	};
	/** The node row's next `count` removals fail before their commit (each removal is tried 3 times). */
	const failRemovals = (count: number) => (fault.removals = count);
	/** Entries written straight into the row, newest last (another process's, long ago). */
	const put = (...entries: string[]) =>
		model.rows.set(NODE_ROW, { mode: 'entries', data: [...data(), ...entries.map(hashOf)] });
	return { store, row, data, has, stateOf, failRemovals, put };
}

const plain: ClaimRequest = { codes: [], expireFlight: false };
/** Marked soon after its claim: one removal, no check. */
const soon = { noExpiryBefore: Number.POSITIVE_INFINITY, lateAfter: Number.POSITIVE_INFINITY };
/** An earlier recovery's codes, still in the option. */
const OPTION = ['K7QM2XR9', 'A2345678', 'B2345678', 'C2345678', 'D2345678', 'E2345678'];

describe('resend codes left in the option (issue 51, defect 3)', () => {
	it("claims listing codes, batched with a late created mark, push out no key: History Size 40, 32 keys, all remembered (before: the outcomes' check trimmed to 41 entries, the 30 created keys were forgotten, the key in flight elsewhere answered new, the key just marked created erased)", async () => {
		const { store, row, stateOf } = setUp(40);
		const created = Array.from({ length: 30 }, (_, n) => `old-${n}`);
		for (const key of created) {
			await expect(store.check(row, key, plain)).resolves.toBe('new');
			await store.settle(row, key, 'created', undefined, soon);
		}
		// In flight in another process, and one of this process marked late (its claim checked in again).
		await expect(store.check(row, 'elsewhere', plain)).resolves.toBe('new');
		await expect(store.check(row, 'marked', plain)).resolves.toBe('new');
		// One batch: five new claims listing the option's codes (two entries per code and key, taken out again) and
		// the late created mark.
		const fresh = Array.from({ length: 5 }, (_, n) => `fresh-${n}`);
		const answers = await Promise.all([
			...fresh.map(async (key) => await store.check(row, key, { ...plain, codes: OPTION })),
			store.settle(row, 'marked', 'created'),
		]);
		expect(answers).toEqual([...fresh.map(() => 'new'), undefined]);
		expect(created.map(stateOf)).toEqual(created.map(() => 'created'));
		expect(stateOf('marked')).toBe('created');
		await expect(store.check(row, 'elsewhere', plain)).resolves.toBe('flight');
		await expect(store.check(row, 'old-0', plain)).resolves.toBe('created');
	});

	it("a code's use goes with its code entry: after a take-over nothing of the code stays, and the code never takes the key again", async () => {
		const { store, row, data } = setUp(10);
		await expect(store.check(row, 'A', plain)).resolves.toBe('new');
		await store.settle(row, 'A', 'unknown', 'X2345678');
		await expect(store.check(row, 'A', { ...plain, codes: ['X2345678'] })).resolves.toEqual({
			taken: 'X2345678',
		});
		// In flight again: its two entries, nothing of the code (before: `used:X2345678 A` stayed for good, one entry
		// per code ever used).
		expect([...data()].sort()).toEqual([hashOf('claim:A'), hashOf('open:A')].sort());
		// The resend ends unknown again, with its own code: the old code, still in the option, does not take it over.
		await store.settle(row, 'A', 'unknown', 'Y2345678');
		await expect(store.check(row, 'A', { ...plain, codes: ['X2345678'] })).resolves.toBe('unknown');
		await expect(store.check(row, 'A', { ...plain, codes: ['Y2345678'] })).resolves.toEqual({
			taken: 'Y2345678',
		});
		await store.settle(row, 'A', 'created', undefined, soon);
		expect(data()).toEqual([hashOf('claim:A')]);
	});

	it('the uses a failed removal left in go with the next removal, like their codes (before: they stayed for good), and count in the limit until then', async () => {
		const { store, row, has, failRemovals } = setUp(10);
		failRemovals(3);
		await expect(store.check(row, 'B', { ...plain, codes: ['X2345678'] })).resolves.toBe('new');
		expect(has('code:X2345678 B')).toBe(true);
		expect(has('used:X2345678 B')).toBe(true);
		// Left in: this process's next trim leaves room for them.
		expect(rowLimit(row, 0)).toBe(rowLimit({ ...row, codesLeftIn: new Map() }, 0) + 2);
		await store.settle(row, 'B', 'created', undefined, soon);
		expect(has('code:X2345678 B')).toBe(false);
		expect(has('used:X2345678 B')).toBe(false);
		expect(row.codesLeftIn.size).toBe(0);
	});
});

describe("a waiter's watch entries (issue 51, defect 4)", () => {
	/** A key claimed here, waited for by another delivery until it is created. */
	async function deliveredTwice(store: KeyStore, row: NodeRow, key: string): Promise<void> {
		await expect(store.check(row, key, plain)).resolves.toBe('new');
		const look = async (sign?: string) =>
			await store.check(row, key, { ...plain, watch: { sign } });
		await expect(store.check(row, key, plain)).resolves.toBe('flight');
		const watching = await look();
		expect(watching).toEqual({ flight: '', same: false });
		await store.settle(row, key, 'created', undefined, soon);
		await expect(look('')).resolves.toBe('created');
	}

	it('twelve events each delivered twice, History Size 20: the first is still created, and the row holds one entry per key (before: its `watched:` entries filled History Size and the first was answered new)', async () => {
		const { store, row, data, stateOf } = setUp(20);
		const keys = Array.from({ length: 12 }, (_, n) => `event-${n}`);
		for (const key of keys) await deliveredTwice(store, row, key);
		expect(keys.map(stateOf)).toEqual(keys.map(() => 'created'));
		expect(data()).toEqual(keys.map((key) => hashOf(`claim:${key}`)));
		await expect(store.check(row, 'event-0', plain)).resolves.toBe('created');
	});

	it('a waiter that gives up takes the watch entries out too: the key is unknown, with its code, and nothing of its watch stays', async () => {
		const { store, row, data } = setUp(20);
		await expect(store.check(row, 'A', plain)).resolves.toBe('new');
		const look = async (sign: string | undefined, expireFlight: boolean) =>
			await store.check(row, 'A', {
				codes: [],
				watch: { sign },
				expireFlight,
				expiryCode: 'E2345678',
			});
		await expect(look(undefined, false)).resolves.toEqual({ flight: '', same: false });
		await expect(look('', true)).resolves.toBe('expired');
		expect([...data()].sort()).toEqual([hashOf('open:A'), hashOf('code:E2345678 A')].sort());
	});

	it.each([3, WATCHED_KEYS + 20])(
		"the watch entries of keys still waited for take no key's place: History Size %i, its newest keys stay with as many keys' watch entries written after them as the row has room for",
		async (historySize) => {
			const { store, row, put, stateOf, data } = setUp(historySize);
			const waited = Math.min(historySize, WATCHED_KEYS);
			// Long ago: created keys; then History Size keys in flight in other processes; then the watch entries of
			// the keys waited for that the row has room for (History Size's, at most WATCHED_KEYS), all end marks there.
			put(...Array.from({ length: 5 }, (_, n) => `claim:old-${n}`));
			const newest = Array.from({ length: historySize }, (_, n) => `K${n + 1}`);
			for (const key of newest) put(`claim:${key}`, `open:${key}`);
			for (let n = 0; n < waited; n++) {
				const key = `waited-${n}`;
				put(watchedEntry(key), ...endEntries(key));
			}
			expect(data()).toHaveLength(5 + KEY_ENTRIES * historySize + waited * (1 + END_MARKS));
			// A batch that adds every kind of entry and no key: a re-delivery listing codes, a waiter's look.
			const answers = await Promise.all([
				store.check(row, 'K2', { ...plain, codes: OPTION }),
				store.check(row, 'K3', { ...plain, watch: {} }),
			]);
			expect(answers).toEqual(['flight', { flight: '', same: false }]);
			expect(newest.map(stateOf)).toEqual(newest.map(() => 'flight'));
			// Only what was older than the newest keys went.
			expect(stateOf('old-0')).toBe('none');
		},
	);
});
