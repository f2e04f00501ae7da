import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import type { ServiceClient } from '../transport/request';

/**
 * What an operation file exports. Its resource's index lists it in `operations`, and the router runs it from
 * there: the router does the item loop, so an operation only handles one item.
 */
export interface Operation {
	/** The operation's fields, shown only when it is chosen (`updateDisplayOptions`). */
	description: INodeProperties[];
	/** Reads, validates (throws `FieldError`) and sends one item; returns its output item without pairedItem. */
	execute(
		this: IExecuteFunctions,
		itemIndex: number,
		client: ServiceClient,
	): Promise<INodeExecutionData>;
	/**
	 * Only for operations that create a record: the record's id in the output json. When a run stops, the report
	 * lists these ids, so a re-run can skip what was already created.
	 */
	createdId?(json: IDataObject): string | undefined;
}
