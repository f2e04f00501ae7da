// One fixed script of calls to n8n's processed-data store, through the four helpers n8n-core gives a node, and
// what the store answered: the same script runs over n8n's own DeduplicationHelper on a real database
// (test/e2e-scale/processes/dedup-store.cjs) and over the stand-ins (test/support/store-model.ts,
// test/support/harness/memory-deduplicator.ts), and test/e2e-scale/store-model.test.ts compares the answers.
// Plain CommonJS without dependencies: the child process over an installed n8n loads it as it is.
'use strict';

const ENTRIES = { mode: 'entries' };
const RACES = 10;
const ATTEMPTS = 10;

// Each section has a workflow of its own (processed_data.workflowId references workflow_entity: the real side
// makes them first), so that no section sees another's rows.
const SECTIONS = [
	'absent',
	'empty',
	'empty-race',
	...Array.from({ length: RACES }, (_, trial) => `race-${trial}`),
	'deleted',
	'dup-absent',
	'dup-present',
	'max-insert',
	'max-update',
	'max-cap',
	'remove',
	'scope',
	'mode',
	'numbers',
];

/** The workflow ids the script uses under `prefix` (workflow_entity.id is a varchar(36) on PostgreSQL). */
function workflowIdsFor(prefix) {
	const ids = SECTIONS.map((section) => `${prefix}-${section}`);
	const long = ids.find((id) => id.length > 36);
	if (long)
		throw new Error(`workflow id ${long} is longer than workflow_entity.id's 36 characters`);
	return ids;
}

/** An error as a fact: the primary key's (any database's words for it), n8n's two mode errors, or its message. */
function errorFact(error) {
	const text = [error?.code, error?.driverError?.code, error?.message].map(String).join(' ');
	if (/23505|SQLITE_CONSTRAINT|UNIQUE constraint|duplicate key/.test(text)) return 'primary-key';
	if (/incompatible setting/.test(String(error?.message))) return 'incompatible setting';
	if (/not possible in mode "latest"/.test(String(error?.message))) return 'not in mode latest';
	return `other: ${error?.message}`;
}

/** A settled call as a fact: its answer or its error. */
async function settle(call) {
	try {
		return { ok: await call() };
	} catch (error) {
		const fact = errorFact(error);
		// The primary key's error code (23505, SQLITE_CONSTRAINT) is what tells the databases apart.
		if (fact === 'primary-key') return { error: fact, code: error.code ?? error.driverError?.code };
		return { error: fact };
	}
}

/** A call answering nothing, as a fact: 'resolved' or its error. */
const outcome = async (call) => {
	const settled = await settle(call);
	return 'error' in settled ? settled.error : 'resolved';
};

/** A check's answer as a fact, with whether `new` is the very array given (n8n's INSERT path returns it). */
async function check(helpers, items, scope, options = ENTRIES) {
	const settled = await settle(() => helpers.checkProcessedAndRecord(items, scope, options));
	if ('error' in settled) return settled;
	const { new: fresh, processed } = settled.ok;
	return { new: fresh, processed, newIsItems: fresh === items };
}

/**
 * Runs the script through `makeHelpers(workflowId, nodeId)` (the node helpers' signatures, as n8n-core's
 * `this.helpers`) and answers `{ workflowIds, facts, retries }`: the ids used (all of workflowIdsFor(prefix)), what
 * the store did (JSON-serialisable) and how many race attempts were made again.
 */
async function storeFacts(makeHelpers, prefix) {
	const ids = workflowIdsFor(prefix);
	const used = new Set();
	const helpers = (section, nodeId = 'n1') => {
		const id = `${prefix}-${section}`;
		if (!ids.includes(id)) throw new Error(`section ${section} is not in SECTIONS`);
		used.add(id);
		return makeHelpers(id, nodeId);
	};
	const count = async (h, scope = 'node', options = ENTRIES) =>
		await h.getProcessedDataCount(scope, options);
	const facts = {};
	// Attempts made again because the calls did not overlap (the schedule's, so not a fact: reported apart).
	let retries = 0;
	// Two reads at once before each race: a database pool then holds two open connections, so that the race's
	// two SELECTs go out together (with one connection still to open, one call can finish before the other reads).
	const warm = async (one, two, scope) => await Promise.all([count(one, scope), count(two, scope)]);

	// An absent row: the first check INSERTs it and answers `new` = the array given; the next one UPDATEs.
	{
		const h = helpers('absent');
		facts.absent = {
			countBefore: await count(h),
			first: await check(h, ['a', 'b'], 'node'),
			countAfter: await count(h),
			second: await check(h, ['a', 'c'], 'node'),
			countEnd: await count(h),
		};
	}

	// A present but EMPTY row (its entries all removed): count 0, yet a check takes the UPDATE path.
	{
		const h = helpers('empty');
		await h.checkProcessedAndRecord(['a'], 'node', ENTRIES);
		await h.removeProcessed(['a'], 'node', ENTRIES);
		facts.empty = {
			count: await count(h),
			check: await check(h, ['a', 'b'], 'node'),
			countAfter: await count(h),
		};
	}

	// The races below need the two calls to overlap (both SELECTs before either write). A database does not
	// always schedule them so, and a schedule where one call ran after the other shows in the answers; such an
	// attempt is no race, and is made again on a fresh row (a node row of its own: two helpers with one node id,
	// as two executions of one node), up to ATTEMPTS times. Any other answer is kept as it is.

	// Two checks of an empty row at once: both UPDATE (no primary key involved), both answer new, and only one
	// write stays (the last writer's; which one is last is the schedule's).
	{
		let fact;
		for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
			const one = helpers('empty-race', `a${attempt}`);
			const two = helpers('empty-race', `a${attempt}`);
			await one.checkProcessedAndRecord(['seed'], 'node', ENTRIES);
			await one.removeProcessed(['seed'], 'node', ENTRIES);
			await warm(one, two, 'node');
			const [x, y] = await Promise.all([check(one, ['x'], 'node'), check(two, ['y'], 'node')]);
			const rowCount = await count(one);
			// Which writes stayed: an entry still held answers processed.
			const probe = await check(one, ['x', 'y'], 'node', { mode: 'entries', maxEntries: 100 });
			fact = { one: x, two: y, count: rowCount, kept: probe.processed.length };
			if (rowCount !== 2) break; // 2: both writes kept, the second check read the first's row
			retries++;
		}
		facts.emptyRace = fact;
	}

	// Two first checks of an absent row at once: one INSERT wins, the other fails on the primary key.
	{
		const outcomes = {};
		const codes = new Set();
		const counts = [];
		for (let trial = 0; trial < RACES; trial++) {
			let results;
			let rowCount;
			for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
				const one = helpers(`race-${trial}`, `a${attempt}`);
				const two = helpers(`race-${trial}`, `a${attempt}`);
				await warm(one, two, 'node');
				results = await Promise.all([check(one, ['token'], 'node'), check(two, ['token'], 'node')]);
				rowCount = await count(one);
				// One answered processed: it read the other's row, so the two did not overlap.
				if (!results.some((result) => result.processed?.length)) break;
				retries++;
			}
			for (const result of results) {
				const kind = result.error ?? (result.new.length ? 'new' : 'processed');
				outcomes[kind] = (outcomes[kind] ?? 0) + 1;
				if (result.error) codes.add(String(result.code));
			}
			counts.push(rowCount);
		}
		facts.absentRace = { outcomes, codes: [...codes].sort(), counts };
	}

	// A deleted row: removeProcessed on it does nothing (no row made), the next check INSERTs.
	{
		const h = helpers('deleted');
		await h.checkProcessedAndRecord(['a'], 'node', ENTRIES);
		await h.clearAllProcessedItems('node', ENTRIES);
		await h.removeProcessed(['a'], 'node', ENTRIES);
		facts.deleted = {
			countAfterRemove: await count(h),
			check: await check(h, ['a'], 'node'),
		};
	}

	// Duplicates inside one check's items: both kept, on either path; a removal takes one occurrence out.
	{
		const absent = helpers('dup-absent');
		const present = helpers('dup-present');
		const first = await check(absent, ['d', 'd'], 'node');
		const firstCount = await count(absent);
		await present.checkProcessedAndRecord(['e'], 'node', ENTRIES);
		const second = await check(present, ['d', 'd'], 'node');
		const secondCount = await count(present);
		await present.removeProcessed(['d'], 'node', ENTRIES);
		facts.duplicates = {
			absent: { check: first, count: firstCount },
			present: { check: second, count: secondCount, countAfterRemovingOne: await count(present) },
		};
	}

	// maxEntries: the INSERT keeps the last N items, the UPDATE the newest N entries; at the cap, the oldest go.
	{
		const insert = helpers('max-insert');
		const update = helpers('max-update');
		const cap = helpers('max-cap');
		const big = { mode: 'entries', maxEntries: 100 };
		facts.maxEntries = {
			insert: {
				check: await check(insert, ['1', '2', '3', '4', '5'], 'node', {
					mode: 'entries',
					maxEntries: 3,
				}),
				count: await count(insert),
				probe: await check(insert, ['1', '2', '3', '5'], 'node', big),
			},
		};
		await update.checkProcessedAndRecord(['a', 'b'], 'node', ENTRIES);
		facts.maxEntries.update = {
			check: await check(update, ['c', 'd', 'e'], 'node', { mode: 'entries', maxEntries: 3 }),
			count: await count(update),
			probe: await check(update, ['a', 'b', 'c', 'e'], 'node', big),
		};
		await cap.checkProcessedAndRecord(['p', 'q', 'r'], 'node', { mode: 'entries', maxEntries: 3 });
		facts.maxEntries.cap = {
			check: await check(cap, ['s', 'q'], 'node', { mode: 'entries', maxEntries: 3 }),
			count: await count(cap),
			probe: await check(cap, ['p', 'q', 'r', 's'], 'node', big),
		};
	}

	// removeProcessed: of an absent entry, nothing; of a present one, that entry.
	{
		const h = helpers('remove');
		await h.checkProcessedAndRecord(['a', 'b', 'c'], 'node', ENTRIES);
		await h.removeProcessed(['z'], 'node', ENTRIES);
		const afterAbsent = await count(h);
		await h.removeProcessed(['b'], 'node', ENTRIES);
		facts.remove = {
			afterAbsent,
			afterPresent: await count(h),
			probe: await check(h, ['a', 'b', 'c'], 'node'),
		};
	}

	// Scope: a row per node, and one per workflow shared by its nodes; clearing one leaves the other.
	{
		const one = helpers('scope', 'n1');
		const two = helpers('scope', 'n2');
		await one.checkProcessedAndRecord(['x', 'y'], 'node', ENTRIES);
		await one.checkProcessedAndRecord(['w'], 'workflow', ENTRIES);
		facts.scope = {
			nodeOne: await count(one),
			nodeTwo: await count(two),
			workflowSeenByTwo: await count(two, 'workflow'),
			wByTwo: await check(two, ['w'], 'workflow'),
		};
		await two.clearAllProcessedItems('workflow', ENTRIES);
		facts.scope.afterWorkflowCleared = {
			workflow: await count(one, 'workflow'),
			nodeOne: await count(one),
		};
		await one.clearAllProcessedItems('node', ENTRIES);
		await two.checkProcessedAndRecord(['v'], 'workflow', ENTRIES);
		facts.scope.afterNodeCleared = {
			nodeOne: await count(one),
			workflow: await count(one, 'workflow'),
		};
	}

	// A row written in another mode (a Remove Duplicates node's "latest" modes): a check in mode entries
	// fails on n8n's mode error, the count in mode entries is 0; only a clear makes the row usable again.
	{
		const h = helpers('mode');
		const latest = { mode: 'latestIncrementalKey' };
		facts.mode = {
			written: await check(h, [5], 'node', latest),
			entriesCheck: await check(h, ['a'], 'node'),
			entriesCount: await count(h),
			latestCount: await count(h, 'node', latest),
			latestRemove: await outcome(() => h.removeProcessed([5], 'node', latest)),
			entriesRemove: await outcome(() => h.removeProcessed(['a'], 'node', ENTRIES)),
		};
		await h.clearAllProcessedItems('node', ENTRIES);
		facts.mode.afterClear = await check(h, ['a'], 'node');
	}

	// The answers hold the items given (not their hashes): numbers stay numbers; 2 and '2' are one entry.
	{
		const h = helpers('numbers');
		facts.numbers = {
			first: await check(h, [1, 2, '3'], 'node'),
			second: await check(h, [1, '2', 3, 4], 'node'),
		};
	}

	const unused = ids.filter((id) => !used.has(id));
	if (unused.length) throw new Error(`workflow ids listed but not used: ${unused.join(', ')}`);
	return { workflowIds: ids, facts, retries };
}

module.exports = { storeFacts, workflowIdsFor, errorFact };
