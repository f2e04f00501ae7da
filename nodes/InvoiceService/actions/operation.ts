import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import type { ServiceClient } from '../transport/request';

/**
 * What an operation file exports. Its resource's index lists it in `operations`, and the router runs it from
 * there: the router does the item loop, so an operation only handles one item, in two steps. `prepare` is the
 * CPU work (n8n evaluates parameters synchronously); the router does it for the next items while earlier ones
 * are in flight, so a free worker can `send` at once.
 */
export interface Operation {
	/** How the Operation selector lists it; its `value` there is its key in the resource's `operations`. */
	option: { name: string; description: string; action: string };
	/** The operation's fields, shown only when it is chosen (`updateDisplayOptions`). */
	description: INodeProperties[];
	/**
	 * Reads and validates one item's parameters (throws `FieldError`) into what `send` needs, e.g. the request
	 * body. Synchronous, and sends nothing: an item that fails here never reaches the service.
	 */
	prepare(this: IExecuteFunctions, itemIndex: number): unknown;
	/** Sends one prepared item; returns its output item without pairedItem. */
	send(
		this: IExecuteFunctions,
		prepared: unknown,
		itemIndex: number,
		client: ServiceClient,
	): Promise<INodeExecutionData>;
	/**
	 * Only for operations that create a record: the record's id in the output json. When a run stops, the report
	 * lists these ids, so a re-run can skip what was already created.
	 */
	createdId?(json: IDataObject): string | undefined;
}
