// One node run in the simulation, through the code users run: the real RunRecord, IdempotencyKeys (of the simulated
// process), ItemStep (with its RunClaims) and run report, items sent by the real prepareAheadAndSend. Only what
// needs n8n or HTTP is stood in for: the execute-functions context (its parameters, its record holder, the
// processed-data helpers of the model) and the operation's create (the simulated service). Each item's turn is the
// router's (ItemStep.turn); the router itself needs a credential and an HTTP client, and is not run.
import type { IExecuteFunctions, INode } from 'n8n-workflow';

import type { Operation } from '../../nodes/InvoiceService/actions/operation';
import { ItemStep, type RunTurns } from '../../nodes/InvoiceService/actions/itemStep';
import {
	IdempotencyKeys,
	type KeySettings,
	type KeysProcess,
} from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import type { Clock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import { RunRecord } from '../../nodes/InvoiceService/exactlyOnce/runRecord';
import {
	keyWarnings,
	noCounts,
	runHints,
	withStopReport,
	type Failed,
	type RunCounts,
} from '../../nodes/InvoiceService/exactlyOnce/runReport';
import { prepareAheadAndSend } from '../../nodes/InvoiceService/helpers/pool';
import type { ModelHelpers } from '../support/store-model';

/** A keyed node of a workflow, with its keys' settings. */
export interface NodeSpec {
	workflow: string;
	nodeId: string;
	settings: KeySettings;
}

/** The simulated service: creates an event's record (or fails, maybe having acted: `serviceMayHaveActed`). */
export interface Service {
	create(processName: string, eventId: string): Promise<Record<string, string>>;
}

export interface RunSpec {
	process: { name: string; keys: KeysProcess; clock: Clock };
	helpers: ModelHelpers;
	node: NodeSpec;
	/** Each item's Idempotency Key (its event). */
	keys: string[];
	/** Options → Resend Unknown Outcomes Of. */
	codes: string[];
	/**
	 * The node run's execute data, where the run record lives: a copy of the failed execution's saved one for a retry
	 * (n8n gives each retry its own copy), a fresh object otherwise.
	 */
	executeData: Record<string, unknown>;
	/** The node's On Error setting is Continue: each failed item is an error item, and the run returns. */
	continueOnFail?: boolean;
	service: Service;
	timings: { maxRetryWaitMs: number; timeoutMs: number };
	concurrency: number;
}

/** What an item was told, in what n8n keeps of the run. */
export interface Told {
	itemIndex: number;
	text: string;
	/** The resend codes told for it: those the report pairs with it ("item 2 (code X)") and its own error's, else all its text holds. */
	codes: string[];
	storeFailure: boolean;
}

/**
 * What the run told its user, as n8n keeps it: a run that throws keeps one error (the router's, with its stop report:
 * withStopReport), a run that returns its hints and warnings, and under Continue each error item. `errors` are every
 * item's own error (for the trace only: n8n keeps no more than the thrown one). `saved`: the execute data n8n saves
 * with a failed execution (undefined when the run returned: nothing to retry).
 */
export interface RunResult {
	told: Told[];
	errors: Array<{ itemIndex: number; text: string }>;
	counts: RunCounts;
	threw: boolean;
	saved?: Record<string, unknown>;
}

const OPERATION = 'invoice/create';
/** The key's expression: read from the item by itemParameter's path reading, as in a workflow. */
const KEY_EXPRESSION = '={{ $json.eventId }}';

export async function runNode(spec: RunSpec): Promise<RunResult> {
	const { process, node, keys, codes } = spec;
	const items = keys.map((eventId) => ({ json: { eventId } }));
	const row = `${node.workflow} n:${node.nodeId}`;
	const n8nNode = {
		id: node.nodeId,
		name: node.nodeId,
		type: 'n8n-nodes-invoice-service.invoiceService',
		typeVersion: 1,
		position: [0, 0],
		parameters: { options: { idempotencyKey: KEY_EXPRESSION } },
	} as INode;
	const context = {
		getWorkflow: () => ({ id: node.workflow }),
		getNode: () => n8nNode,
		getParentNodes: () => [],
		getChildNodes: () => [],
		getInputData: () => items,
		getNodeParameter: (name: string, _itemIndex: number, fallback: unknown) =>
			name === 'options.idempotencyKey' ? KEY_EXPRESSION : fallback,
		getExecuteData: () => spec.executeData,
		getMode: () => 'trigger',
		continueOnFail: () => spec.continueOnFail ?? false,
		helpers: spec.helpers,
	} as unknown as IExecuteFunctions;
	const operation = {
		prepare: (itemIndex: number) => ({ body: { eventId: keys[itemIndex] } }),
		create: async (prepared: { body: { eventId: string } }) =>
			await spec.service.create(process.name, `${row}/${prepared.body.eventId}`),
	} as unknown as Operation;

	const continueOnFail = spec.continueOnFail ?? false;
	const record = RunRecord.of(context, { toolCall: false });
	const counts = noCounts(codes);
	const result: RunResult = { told: [], errors: [], counts, threw: false };
	let keysOfRun: IdempotencyKeys;
	try {
		keysOfRun = IdempotencyKeys.of(context, node.settings, process.keys);
	} catch (error) {
		// The router's prepareRun: thrown before any item (under Continue, every item gets it).
		const text = `${(error as Error).message} ${(error as { description?: string }).description ?? ''}`;
		const told = continueOnFail ? keys.map((_, itemIndex) => itemIndex) : [0];
		result.told = told.map((itemIndex) => ({ itemIndex, text, codes: [], storeFailure: true }));
		result.threw = !continueOnFail;
		return result;
	}
	const step = new ItemStep(
		context,
		{
			operation,
			operationName: OPERATION,
			runOptions: { ...spec.timings, concurrency: spec.concurrency, resendCodes: codes },
			client: undefined as never,
			keys: keysOfRun,
			record,
			counts,
		},
		items.length,
	);
	const turns: RunTurns = {
		results: new Array(items.length),
		alreadyCreated: new Array(items.length),
		failures: [],
		notResent: [],
	};
	const handled = new Set<number>();
	await prepareAheadAndSend({
		count: items.length,
		concurrency: spec.concurrency,
		lookAhead: spec.concurrency,
		prepare: (itemIndex) => operation.prepare.call(context, itemIndex),
		send: async (itemIndex, take) => {
			handled.add(itemIndex);
			await step.turn(itemIndex, take, turns, continueOnFail);
		},
		shouldStop: () => turns.failures.length > 0,
		yieldToEventLoop: async () => await process.clock.sleep(0),
	});
	await step.keysWritten();
	const { failures, notResent } = turns;
	const failed: Failed[] = [...failures, ...notResent];
	const own = new Map(failed.map(({ error }) => [error, textOf(error.message, error.description)]));
	for (const { itemIndex, error } of failed)
		result.errors.push({ itemIndex, text: own.get(error)! });
	if (failed.length > 0) {
		// As the router does: seal the record, throw one error with the stop report; n8n keeps that one.
		record.seal(OPERATION);
		const thrown = withStopReport({
			failures,
			notResent,
			record,
			createdId: (json) => json.id as string | undefined,
			handled,
			count: items.length,
			counts,
		});
		const thrownIndex = failed.find(({ error }) => error === thrown)!.itemIndex;
		const ownText = own.get(thrown)!;
		const full = textOf(thrown.message, thrown.description);
		const report = full.startsWith(ownText) ? full.slice(ownText.length) : full;
		result.told = tellItems(items.length, [ownText], report, [thrownIndex], thrownIndex);
		result.threw = true;
		result.saved = JSON.parse(JSON.stringify(spec.executeData)) as Record<string, unknown>;
		return result;
	}
	// The run returns: under Continue, each error item is told its own error; the hints and warnings are kept.
	const errorItems = turns.results.flatMap((item, itemIndex) => {
		const error = item?.json.error as { message: string; description?: string } | undefined;
		return error ? [{ itemIndex, text: textOf(error.message, error.description) }] : [];
	});
	for (const { itemIndex, text } of errorItems) result.errors.push({ itemIndex, text });
	if (errorItems.length > 0) record.seal(OPERATION);
	else record.forget();
	const hints = [...runHints(counts), ...keyWarnings(counts)].join(' ');
	result.told = tellItems(
		items.length,
		[],
		hints,
		items.map((_, itemIndex) => itemIndex),
		undefined,
		errorItems,
	);
	return result;
}

const textOf = (message: string, description?: string | null) =>
	`${message} ${description ?? ''}`.trim();

/**
 * Who of the run's items was told what: the thrown item its own error (`own`), each item the sentences of the report
 * (or hints) that name it ("item 2") and those after them naming none, the first sentences naming none every item of
 * `unnamed`, and under Continue each error item its own error.
 */
function tellItems(
	count: number,
	own: string[],
	report: string,
	unnamed: number[],
	thrownIndex: number | undefined,
	errorItems: Array<{ itemIndex: number; text: string }> = [],
): Told[] {
	const texts = new Map<number, string[]>();
	const add = (itemIndex: number, text: string) => {
		if (itemIndex < 0 || itemIndex >= count) return;
		let list = texts.get(itemIndex);
		if (!list) texts.set(itemIndex, (list = []));
		list.push(text);
	};
	/** Each item's own error, as n8n keeps it: the thrown one's, an error item's. */
	const ownTexts = new Map<number, string>();
	if (thrownIndex !== undefined) ownTexts.set(thrownIndex, own.join(' '));
	for (const { itemIndex, text } of errorItems) ownTexts.set(itemIndex, text);
	for (const [itemIndex, text] of ownTexts) add(itemIndex, text);
	const paired = new Map<number, string[]>();
	// A sentence naming no item goes on about the items the one before named (a way forward after a warning).
	let about = unnamed;
	for (const sentence of report.split(/(?<=\.)\s+/)) {
		if (sentence.trim() === '') continue;
		const named = [...sentence.matchAll(/\bitem (\d+)\b/gi)].map((match) => Number(match[1]));
		if (named.length > 0) about = [...new Set(named)];
		for (const itemIndex of about) add(itemIndex, sentence);
		for (const match of sentence.matchAll(/\bitem (\d+) \(code ([0-9A-Z]{8})\)/gi)) {
			const itemIndex = Number(match[1]);
			paired.set(itemIndex, [...(paired.get(itemIndex) ?? []), match[2]]);
		}
	}
	return [...texts].map(([itemIndex, parts]) => {
		const text = parts.join(' ');
		const all = [...new Set(text.match(CODES) ?? [])];
		const ownCodes = ownTexts.get(itemIndex)?.match(CODES) ?? [];
		const pairs = paired.get(itemIndex);
		return {
			itemIndex,
			text,
			codes: pairs ? [...new Set([...pairs, ...ownCodes])] : all,
			storeFailure: /n8n's database|stayed busy/.test(text),
		};
	});
}

/** A resend code as errors and warnings print it (resendCodes.ts). */
export const CODES = /\b[23456789ABCDEFGHJKMNPQRSTVWXYZ]{8}\b/g;
