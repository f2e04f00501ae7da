import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { FieldError, describeValue } from '../helpers/validate';
import { numberOption, type NumberOption, readNumberOption } from './common.descriptions';

/**
 * Idempotency keys: an item whose key already created a record through this node, in any earlier execution of
 * the workflow, is not sent again. The keys live in n8n's processed-data store (the one Remove Duplicates uses:
 * n8n's own database, shared by queue-mode workers), scope "node". Unlike Remove Duplicates, a key is claimed
 * just before its item is sent and released when the create certainly did not happen (refused, or never sent),
 * so a re-delivered event is still created then; it is kept when the outcome is unknown.
 *
 * The store's check-then-write is not atomic (read the row, write it back whole), so inside one n8n process
 * every claim and release for one node is serialised, and a claim of a key still in flight waits for that
 * item's outcome. Between queue-mode workers the store's own read-write window remains (see the README).
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

/** Claims and releases in this process, per node (workflow id + node id): one at a time. */
const storeTurns = new Map<string, Promise<unknown>>();
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
			isNew = await this.inTurn(async () => await this.checkAndRecord(key));
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
					await this.inTurn(
						async () =>
							await this.context.helpers.removeProcessed([key], 'node', { mode: 'entries' }),
					);
				} finally {
					done();
				}
			},
		};
	}

	/**
	 * Whether the key is new (and now recorded). The first write of a node's row is an insert, and two processes
	 * inserting at once collide on its primary key: the loser finds the row on its second try.
	 */
	private async checkAndRecord(key: string): Promise<boolean> {
		const check = async () =>
			await this.context.helpers.checkProcessedAndRecord([key], 'node', {
				mode: 'entries',
				maxEntries: this.historySize,
			});
		const found = await check().catch(check);
		return found.new.length === 1;
	}

	/** Runs one read-modify-write of this node's row in the store after the previous one in this process. */
	private async inTurn<T>(work: () => Promise<T>): Promise<T> {
		const previous = storeTurns.get(this.scope) ?? Promise.resolve();
		const turn = previous.then(work);
		const tail = turn.catch(() => undefined);
		storeTurns.set(this.scope, tail);
		try {
			return await turn;
		} finally {
			if (storeTurns.get(this.scope) === tail) storeTurns.delete(this.scope);
		}
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
