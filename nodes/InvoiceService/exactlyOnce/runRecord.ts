import { createHash, randomUUID } from 'node:crypto';

import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { newResendCode } from './resendCodes';

/**
 * What this node run already did with each item, so that nothing is created twice when n8n runs the node again
 * with the same input items:
 * - n8n's Retry On Fail runs the whole node again, in the same process, when it throws or (in the Continue modes)
 *   when its first output item is an error item;
 * - a failed execution retried from the executions list (`ExecutionService.retry`, either button, even after a
 *   restart or on another queue-mode worker) runs the failed node again from the saved execution.
 *
 * Per item index it keeps either what the service created or, when the service may have acted without
 * answering, the error, and once an id that every retry of a failed execution copies (`family`). Exactly this,
 * never binary data, never the key:
 * - created: the fields of the service's answer, which are the output item's json (a customer's id, name and
 *   e-mail; an invoice's invoice_id, status and download_url), so that the item a retry returns carries the
 *   same fields its first output had; and `fingerprint`, a SHA-256 of the operation and the request body,
 *   which only feeds a hint (it is computed only when the record is saved, not for a run that succeeds);
 * - outcome unknown: the error's message, description and HTTP code, and its resend code (resendCodes.ts).
 * On the next run of the same item index, whatever changed in the node meanwhile:
 * - created → its output is returned, rebuilt from the record (or the very same item, in the same process),
 *   without a request; if its request is not the one it was created with (a retry "with current workflow" after
 *   an edit), a hint says so;
 * - outcome unknown → it fails again with its first error, without a request, unless Options → Resend Unknown
 *   Outcomes Of lists its code: then it is sent again (the user checked the service), and its record starts
 *   afresh (ending unknown again, it gets a new code);
 * - an item never created is sent.
 *
 * Where it lives: on the node run's execute data (`getExecuteData()`), the one object n8n hands every try of one
 * node run and, when the node throws, puts back on the execution's stack and saves with the failed execution
 * (`WorkflowExecute.handleNodeExecutionError`); a retried execution gets the saved copy back. It is a plain
 * property, which n8n 1.123 and 2.x both save and restore (`setMetadata` reaches the retry on 2.x only). The run's
 * own outputs (with the PDF already in n8n's binary store) are also kept in memory, held weakly by that object,
 * so that Retry On Fail in the same process hands back the very same items. A run that ends with nothing failed
 * will not be run again: it drops its record at once. When n8n does not hand the record back (another engine, a
 * copied execution), every item is sent as if for the first time.
 */
export const RECORD_PROPERTY = 'invoiceServiceRunRecord';

/** The error an item failed with when the service may have acted on it: said again, word for word. */
export interface RecordedError {
	message: string;
	description?: string;
	httpCode?: string;
}

interface RecordedItem {
	/** Of the request that created it; set when the record is sealed. Absent for an unknown outcome. */
	fingerprint?: string;
	/** The service's answer: the output item's json. */
	created?: IDataObject;
	unknown?: RecordedError;
	/** The unknown outcome's resend code. */
	code?: string;
}

interface SavedRecord {
	version: 1;
	/**
	 * Made with the record in the node run's first try, and copied with it into every retry of the execution: what
	 * sibling retries of one failed execution share (see `family`). Absent in records saved by earlier versions.
	 */
	id?: string;
	/** By input item index (the retried run gets the same items in the same order). */
	items: Record<string, RecordedItem>;
}

/** What an earlier run of this item did, when it must not be sent again. */
export type Recalled =
	| { created: IDataObject; output?: INodeExecutionData; fingerprint?: string }
	| { unknown: RecordedError; code: string };

/** What only this process holds for a record: the outputs returned, and the bodies not yet fingerprinted. */
interface InMemory {
	outputs: Map<number, INodeExecutionData>;
	bodies: Map<number, IDataObject>;
}
const inMemory = new WeakMap<SavedRecord, InMemory>();

/** The fingerprint of one item's request: the same operation and body give the same text. */
export function fingerprintOf(operation: string, body: IDataObject): string {
	return createHash('sha256')
		.update(operation)
		.update('\n')
		.update(JSON.stringify(body))
		.digest('base64url');
}

export class RunRecord {
	private constructor(
		private readonly holder: Record<string, unknown> | undefined,
		private readonly saved: SavedRecord | undefined,
	) {}

	/**
	 * The record of this node run. None for a tool call: each call is a new question from the model with its own
	 * arguments, although n8n may hand every call of one agent run the same execute data and input item.
	 */
	static of(context: IExecuteFunctions, { toolCall }: { toolCall: boolean }): RunRecord {
		const holder = toolCall
			? undefined
			: (context.getExecuteData?.() as unknown as Record<string, unknown> | undefined);
		if (!holder) return new RunRecord(undefined, undefined);
		const found = holder[RECORD_PROPERTY];
		const saved = isSavedRecord(found)
			? found
			: { version: 1 as const, id: randomUUID(), items: {} };
		holder[RECORD_PROPERTY] = saved;
		return new RunRecord(holder, saved);
	}

	/**
	 * The id every try and retry of this node run shares: n8n's executions list can retry one failed execution more
	 * than once (the original again after its retry failed too), and each retry starts from the same saved record,
	 * which does not hold what the other retries created. Undefined without a record.
	 */
	get family(): string | undefined {
		return this.saved?.id;
	}

	/** What an earlier run did with this item (by its index, whatever its request is now); undefined: send it. */
	recall(itemIndex: number): Recalled | undefined {
		const item = this.saved?.items[itemIndex];
		if (!item) return undefined;
		if (item.created) {
			const output = this.memory()?.outputs.get(itemIndex);
			return {
				created: item.created,
				...(output ? { output } : {}),
				...(item.fingerprint ? { fingerprint: item.fingerprint } : {}),
			};
		}
		return item.unknown ? { unknown: item.unknown, code: codeOf(item) } : undefined;
	}

	/**
	 * The service created the item's record: `created` is the fields it returned. The body it was created with
	 * is fingerprinted only if the record is sealed (the run did not succeed).
	 */
	created(itemIndex: number, body: IDataObject, created: IDataObject): void {
		if (!this.saved) return;
		this.saved.items[itemIndex] = { created };
		this.memory(true)!.bodies.set(itemIndex, body);
	}

	/** The output this run returns for a created item, kept in memory for a later try in this process. */
	returned(itemIndex: number, output: INodeExecutionData): void {
		this.memory(true)?.outputs.set(itemIndex, output);
	}

	/**
	 * The item failed, and the service may have acted on it: it is not sent again unless the user says so. An
	 * item created before it failed (its PDF not downloaded) stays created: a later run only completes its output.
	 */
	unknown(itemIndex: number, error: RecordedError, code: string): void {
		if (!this.saved || this.saved.items[itemIndex]?.created) return;
		this.saved.items[itemIndex] = { unknown: { ...error }, code };
	}

	/**
	 * The item's key has a new resend code (this run, listing the old one, claimed the key and gave up waiting for
	 * another execution's send of it): the old code is used, so an unknown item says the new one from now on.
	 */
	recode(itemIndex: number, code: string): void {
		const item = this.saved?.items[itemIndex];
		if (!item?.unknown) return;
		const old = codeOf(item);
		const swap = (text: string) => text.split(old).join(code);
		const { message, description } = item.unknown;
		item.unknown = {
			...item.unknown,
			message: swap(message),
			...(description === undefined ? {} : { description: swap(description) }),
		};
		item.code = code;
	}

	/** The user checked the service and asked to send an unknown item again: what the record said of it goes. */
	resend(itemIndex: number): void {
		if (this.saved) delete this.saved.items[itemIndex];
	}

	/** The run will be tried again: the requests of the items it created get their fingerprints (for the hint). */
	seal(operation: string): void {
		const memory = this.memory();
		if (!memory || !this.saved) return;
		for (const [itemIndex, body] of memory.bodies) {
			const item = this.saved.items[itemIndex];
			if (item?.created) item.fingerprint = fingerprintOf(operation, body);
		}
		memory.bodies.clear();
	}

	private memory(create = false): InMemory | undefined {
		if (!this.saved) return undefined;
		let memory = inMemory.get(this.saved);
		if (!memory && create) {
			memory = { outputs: new Map(), bodies: new Map() };
			inMemory.set(this.saved, memory);
		}
		return memory;
	}

	/** Every item that any run of this node run created or may have acted on, by index. */
	entries(): Array<[number, Recalled]> {
		if (!this.saved) return [];
		return Object.entries(this.saved.items).flatMap(([index, item]): Array<[number, Recalled]> => {
			if (item.created) return [[Number(index), { created: item.created }]];
			return item.unknown ? [[Number(index), { unknown: item.unknown, code: codeOf(item) }]] : [];
		});
	}

	/** The run ended with nothing failed: n8n will not run it again. */
	forget(): void {
		if (this.holder) delete this.holder[RECORD_PROPERTY];
	}
}

/** An unknown item's resend code; one saved without (an earlier build) gets one now, saved with the record. */
function codeOf(item: RecordedItem): string {
	item.code ??= newResendCode();
	return item.code;
}

function isSavedRecord(value: unknown): value is SavedRecord {
	const record = value as SavedRecord | undefined;
	return (
		typeof record === 'object' &&
		record !== null &&
		record.version === 1 &&
		(record.id === undefined || typeof record.id === 'string') &&
		typeof record.items === 'object' &&
		record.items !== null
	);
}
