import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	NodeParameterValueType,
} from 'n8n-workflow';

import type { ServiceClient } from '../transport/request';

/** What `prepare` hands to `send`: at least the request body (its fingerprint identifies the request). */
export interface Prepared {
	body: IDataObject;
}

/**
 * What an operation file exports. Every operation creates a record: `create`, `createdId`, the run record and
 * the Idempotency Keys rest on that (a create sent twice is a duplicate). An operation that changes or reads
 * records needs its own contract first (docs/development.md, "How to add an operation").
 * Its resource's index lists it in `operations`, and the router runs it from
 * there: the router does the item loop, so an operation only handles one item, in two steps. `prepare` is the
 * CPU work (n8n evaluates parameters synchronously); the router does it for the next items while earlier ones
 * are in flight, so a free worker can `create` at once. `outputOf` then turns the created record into the
 * output item; a retried run that finds the record already created calls only that.
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
	prepare(this: IExecuteFunctions, itemIndex: number): Prepared;
	/** Sends one prepared item's create request; returns the record the service created (its fields). */
	create(
		this: IExecuteFunctions,
		prepared: Prepared,
		itemIndex: number,
		client: ServiceClient,
	): Promise<IDataObject>;
	/**
	 * The output item (without pairedItem) of a created record, from the fields the service returned, now or in an
	 * earlier run of this node run: e.g. with the PDF downloaded. Without it, the output is those fields alone.
	 */
	outputOf?(
		this: IExecuteFunctions,
		prepared: Prepared,
		created: IDataObject,
		itemIndex: number,
		client: ServiceClient,
	): Promise<INodeExecutionData>;
	/**
	 * Only for operations that create a record: the record's id in the output json. When a run stops, the report
	 * lists these ids, so a re-run can skip what was already created.
	 */
	createdId?(json: IDataObject): string | undefined;
	/** The operation in the node's AI tool variant (actions/tool.ts). */
	tool: OperationTool;
}

/** What an AI model is told about an operation, the fields it fills, and what it gets back. */
export interface OperationTool {
	/**
	 * What the model is told the tool does, with the format of every argument: n8n puts only this text and the
	 * `$fromAI()` descriptions in front of the model, and a field the user switched to "defined automatically by
	 * the model" carries an empty `$fromAI()` description.
	 */
	description: string;
	/** The value fields start with in the tool variant, by field name: mostly `fromAI()` arguments. */
	defaults: Record<string, NodeParameterValueType>;
	/** The fields of the service's answer that the model gets back. */
	answerFields: string[];
}
