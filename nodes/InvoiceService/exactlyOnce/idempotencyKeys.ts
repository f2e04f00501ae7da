import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { FieldError, describeValue } from '../helpers/validate';
import { numberOption, type NumberOption, readNumberOption } from '../actions/common.descriptions';

/**
 * Idempotency keys: an item whose key already created a record through this node, in any earlier execution of
 * the workflow, is not sent again. The keys live in n8n's processed-data store (the one Remove Duplicates uses:
 * n8n's own database, shared by queue-mode workers), scope "node". Unlike Remove Duplicates, a key is claimed
 * just before its item is sent and released when the create certainly did not happen (refused, or never sent),
 * so a re-delivered event is still created then; it is kept when the outcome is unknown.
 *
 * The store's check-then-write is not atomic (read the row, write it back whole), so inside one n8n process
 * one writer per node does every claim and release, one write at a time (those that arrive during a write go
 * together in the next: a burst of events costs the database a few writes, not one per item), and a claim of a
 * key still in flight waits for that item's outcome. Between queue-mode workers the store's own read-write
 * window remains (see the README).
 */

export const idempotencyKeyOption: INodeProperties = {
	displayName: 'Idempotency Key',
	name: 'idempotencyKey',
	type: 'string',
	default: '',
	placeholder: 'e.g. {{ $json.eventId }}',
	hint: "Usually an expression over the event's own ID, such as {{ $json.eventId }}",
	description:
		"A value unique to the event this item comes from. An item whose key already created a record through this node (in any earlier execution of the workflow, manual runs included) is not sent again and goes to the node's Already Created output. Blank: no check.",
};

export const historySizeOption: NumberOption = {
	...numberOption('historySize', 'History Size', 10000, { minValue: 1 }),
	description:
		'How many Idempotency Keys this node remembers; beyond that the oldest are forgotten (and could be created again)',
};

/** The options that make keys work, in the order the Options collection lists them. */
export const idempotencyOptions: INodeProperties[] = [idempotencyKeyOption, historySizeOption];

/** A claimed key: keep it once the record exists (or may), release it when nothing was created. */
export interface Claim {
	keep(): Promise<void>;
	release(): Promise<void>;
}

type StoreHelpers = Pick<
	IExecuteFunctions['helpers'],
	'checkProcessedAndRecord' | 'removeProcessed'
>;

interface Waiting<T> {
	key: string;
	resolve(value: T): void;
	reject(error: unknown): void;
}

/**
 * The one writer of a node's row in this process. Claims and releases queue here; each write takes all that
 * queued while the previous one ran (releases first, then claims), so no two writes of this process overlap.
 */
class RowWriter {
	private readonly claims: Array<Waiting<boolean>> = [];
	private readonly releases: Array<Waiting<void>> = [];
	private writing = false;

	constructor(
		private readonly scope: string,
		private readonly helpers: StoreHelpers,
		private readonly historySize: number,
	) {}

	/** Whether the key is new (and now recorded). */
	async claim(key: string): Promise<boolean> {
		return await new Promise<boolean>((resolve, reject) => {
			this.claims.push({ key, resolve, reject });
			void this.write();
		});
	}

	async release(key: string): Promise<void> {
		return await new Promise<void>((resolve, reject) => {
			this.releases.push({ key, resolve, reject });
			void this.write();
		});
	}

	private async write(): Promise<void> {
		if (this.writing) return;
		this.writing = true;
		try {
			while (this.claims.length > 0 || this.releases.length > 0) {
				await settle(this.releases.splice(0), async (keys) => {
					await this.helpers.removeProcessed(keys, 'node', { mode: 'entries' });
					return keys.map(() => undefined);
				});
				await settle(this.claims.splice(0), async (keys) => {
					const fresh = new Set((await this.checkAndRecord(keys)).map(String));
					return keys.map((key) => fresh.has(key));
				});
			}
		} finally {
			this.writing = false;
			if (writers.get(this.scope) === this) writers.delete(this.scope);
		}
	}

	/**
	 * The keys that are new (and now recorded). The first write of a node's row is an insert, and two processes
	 * inserting at once collide on its primary key: the loser finds the row on its second try.
	 */
	private async checkAndRecord(keys: string[]) {
		const check = async () =>
			await this.helpers.checkProcessedAndRecord(keys, 'node', {
				mode: 'entries',
				maxEntries: this.historySize,
			});
		return (await check().catch(check)).new;
	}
}

/** Answers everybody waiting with one store call's results, or with its error. */
async function settle<T>(
	waiting: Array<Waiting<T>>,
	call: (keys: string[]) => Promise<T[]>,
): Promise<void> {
	if (waiting.length === 0) return;
	try {
		const results = await call(waiting.map(({ key }) => key));
		waiting.forEach(({ resolve }, index) => resolve(results[index]));
	} catch (error) {
		for (const { reject } of waiting) reject(error);
	}
}

/** Each node's writer in this process (workflow id + node id), while it has work. */
const writers = new Map<string, RowWriter>();
/** Keys whose item is in flight in this process: a second claim waits for the first item's outcome. */
const inFlight = new Map<string, Promise<void>>();

export class IdempotencyKeys {
	private constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: string,
		private readonly historySize: number,
	) {}

	/** The keys of this run, or undefined when the node has no Idempotency Key set (today's behaviour). */
	static of(context: IExecuteFunctions, options: IDataObject): IdempotencyKeys | undefined {
		if (!keysConfigured(context.getNode().parameters)) return undefined;
		const historySize = readNumberOption(options, historySizeOption, { whole: true });
		const scope = `${context.getWorkflow().id ?? ''} ${context.getNode().id}`;
		return new IdempotencyKeys(context, scope, historySize);
	}

	/** The item's key; undefined when blank. Throws FieldError for a value that is not text or a number. */
	read(itemIndex: number): string | undefined {
		const value = this.context.getNodeParameter('options.idempotencyKey', itemIndex, '') as unknown;
		if (value === undefined || value === null) return undefined;
		if (typeof value === 'number' && Number.isFinite(value)) return String(value);
		if (typeof value !== 'string') {
			throw new FieldError(
				idempotencyKeyOption.displayName,
				`must be text or a number, got ${describeValue(value)}`,
			);
		}
		const key = value.trim();
		return key === '' ? undefined : key;
	}

	/**
	 * Claims the key for this item: undefined when it already created a record (do not send), else the claim.
	 * A claim of a key whose item is in flight in this process waits for that item's outcome first.
	 */
	async claim(key: string, itemIndex: number): Promise<Claim | undefined> {
		const id = `${this.scope} ${key}`;
		for (let pending = inFlight.get(id); pending; pending = inFlight.get(id)) await pending;
		let settle!: () => void;
		inFlight.set(id, new Promise<void>((resolve) => (settle = resolve)));
		const done = () => {
			inFlight.delete(id);
			settle();
		};
		let isNew: boolean;
		try {
			isNew = await this.writer().claim(key);
		} catch (error) {
			done();
			throw new NodeOperationError(
				this.context.getNode(),
				`Could not check the Idempotency Key in n8n's database: ${(error as Error).message ?? String(error)}`,
				{ itemIndex, description: 'Nothing was sent to the service for this item.' },
			);
		}
		if (!isNew) {
			done();
			return undefined;
		}
		return {
			keep: async () => done(),
			release: async () => {
				try {
					await this.writer().release(key);
				} finally {
					done();
				}
			},
		};
	}

	/** This node's writer in this process (a new one when the last has finished its work). */
	private writer(): RowWriter {
		let writer = writers.get(this.scope);
		if (!writer) {
			writer = new RowWriter(this.scope, this.context.helpers, this.historySize);
			writers.set(this.scope, writer);
		}
		return writer;
	}
}

/**
 * The node's outputs for its parameters: with an Idempotency Key set (an expression counts as set), a second
 * output for the items already created in an earlier execution. Handed to n8n as the text of an expression
 * (`outputs` in the node description), so it refers to nothing outside itself.
 */
export function configuredOutputs(parameters: {
	options?: { idempotencyKey?: unknown };
}): Array<{ type: 'main'; displayName?: string }> {
	const key = parameters.options?.idempotencyKey;
	const set =
		typeof key === 'number' || (typeof key === 'string' && key.trim() !== '' && key.trim() !== '=');
	return set
		? [
				{ type: 'main', displayName: 'Created' },
				{ type: 'main', displayName: 'Already Created' },
			]
		: [{ type: 'main' }];
}

/** Whether the node's Idempotency Key parameter is set: the node then has its Already Created output. */
export function keysConfigured(parameters: IDataObject): boolean {
	return configuredOutputs(parameters).length === 2;
}
