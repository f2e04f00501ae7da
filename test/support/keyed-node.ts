// A keyed node of one workflow on the model of n8n's store (store-model.ts), as two processes see it: the execute
// context of the process under test (its queries made as `caller`), and another process's KeyStore, with its own
// lock turns, and the node's row as that process names it.
import type { IExecuteFunctions } from 'n8n-workflow';

import { KeyStore } from '../../nodes/InvoiceService/exactlyOnce/keyStore';
import type { NodeRow } from '../../nodes/InvoiceService/exactlyOnce/rowOps';
import {
	keysProcess,
	type KeysProcess,
} from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import { RowLock, systemClock } from '../../nodes/InvoiceService/exactlyOnce/rowLock';
import {
	KEYS_TIMING,
	type AheadTiming,
	type FlightTiming,
	type KeysTiming,
	type LockTiming,
} from '../../nodes/InvoiceService/exactlyOnce/timing';
import type { StoreModel } from './store-model';

export function keyedNodeOver(model: StoreModel, workflow: string, nodeId: string, caller: string) {
	const context = {
		getNode: () => ({ id: nodeId, name: 'Create customer', parameters: {} }),
		getWorkflow: () => ({ id: workflow }),
		getParentNodes: () => [],
		getChildNodes: () => [],
		helpers: model.helpersFor(workflow, nodeId, caller),
	} as unknown as IExecuteFunctions;
	const helpers = model.helpersFor(workflow, nodeId, 'other');
	const otherStore = new KeyStore(
		new RowLock(workflow, helpers as never, systemClock, new Map()),
		() => undefined,
	);
	const otherRow: NodeRow = {
		scope: `other ${nodeId}`,
		helpers: helpers as never,
		historySize: 100,
		codesLeftIn: new Map(),
	};
	return { context, otherStore, otherRow };
}

/** Timings to change for a test, the others as the node's. */
export interface TimingChange {
	lock?: Partial<LockTiming>;
	flight?: Partial<FlightTiming>;
	ahead?: Partial<AheadTiming>;
}

/** The node's timings with `change` made. */
export function timingWith(change: TimingChange): KeysTiming {
	return {
		lock: { ...KEYS_TIMING.lock, ...change.lock },
		flight: { ...KEYS_TIMING.flight, ...change.flight },
		ahead: { ...KEYS_TIMING.ahead, ...change.ahead },
	};
}

/** A process of its own for the keys under test (its stores, its lock turns), on the system's clock. */
export function keysProcessWith(change: TimingChange): KeysProcess {
	return keysProcess({ timing: timingWith(change) });
}
