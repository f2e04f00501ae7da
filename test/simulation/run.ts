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
	/** What n8n keeps of the node run (the run record): the same object for a retry of a failed execution. */
	executeData: Record<string, unknown>;
	service: Service;
	timings: { maxRetryWaitMs: number; timeoutMs: number };
	concurrency: number;
}

/** What the run told its user: each failed item's error text, and the run's counts (its warnings come from them). */
export interface RunResult {
	errors: Array<{ itemIndex: number; text: string; storeFailure: boolean }>;
	counts: RunCounts;
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
		continueOnFail: () => false,
		helpers: spec.helpers,
	} as unknown as IExecuteFunctions;
	const operation = {
		prepare: (itemIndex: number) => ({ body: { eventId: keys[itemIndex] } }),
		create: async (prepared: { body: { eventId: string } }) =>
			await spec.service.create(process.name, `${row}/${prepared.body.eventId}`),
	} as unknown as Operation;

	const record = RunRecord.of(context, { toolCall: false });
	const counts = noCounts(codes);
	const result: RunResult = { errors: [], counts };
	let keysOfRun: IdempotencyKeys;
	try {
		keysOfRun = IdempotencyKeys.of(context, node.settings, process.keys);
	} catch (error) {
		result.errors.push({ itemIndex: 0, text: String(error), storeFailure: true });
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
	const turns: RunTurns = { results: [], alreadyCreated: [], failures: [], notResent: [] };
	await prepareAheadAndSend({
		count: items.length,
		concurrency: spec.concurrency,
		lookAhead: spec.concurrency,
		prepare: (itemIndex) => operation.prepare.call(context, itemIndex),
		send: async (itemIndex, take) => await step.turn(itemIndex, take, turns, false),
		shouldStop: () => turns.failures.length > 0,
		yieldToEventLoop: async () => await process.clock.sleep(0),
	});
	for (const { itemIndex, error } of [...turns.failures, ...turns.notResent]) {
		const text = `${error.message} ${error.description ?? ''}`;
		result.errors.push({
			itemIndex,
			text,
			storeFailure: /n8n's database|stayed locked/.test(text),
		});
	}
	await step.keysWritten();
	if (result.errors.length > 0) record.seal(OPERATION);
	else record.forget();
	// A claim ahead that gave up on another execution's flight, its item not sent, is told only in a warning.
	const warnings = keyWarnings(counts);
	for (const { itemIndex, code } of counts.keysNotWritten.expiredUnsent) {
		const text = warnings.find((warning) => warning.includes(code)) ?? '';
		result.errors.push({ itemIndex, text, storeFailure: false });
	}
	return result;
}
