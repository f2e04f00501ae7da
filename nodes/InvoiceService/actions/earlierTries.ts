import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { isToolRun } from './tool';

/**
 * What earlier tries of the same node run already did with each item, for n8n's Retry On Fail. n8n runs the
 * whole node again, with the same input items, when it throws or (in the Continue modes) when its first output
 * item is an error item; without this memory every item created in the first try would be created again.
 *
 * - an item created in an earlier try returns that try's output (same ids, same PDF binary), without a request;
 * - an item the service acted on, or may have (cut by the Timeout, connection lost after sending, the invoice
 *   created but its PDF not downloaded), fails again with its first error, without a request;
 * - every other item (failed for sure, or not sent) is tried again.
 *
 * Lifetime: keyed by the node run's execute data, the one object n8n hands every try of one node run
 * (`getExecuteData()`: the same across tries, another for another execution or run index), and within it by the
 * input item object. Both are held weakly: when n8n drops the execution the memory goes with it. A run that ends
 * with nothing failed will not be tried again, and forgets at once.
 */
export type Remembered =
	| { output: INodeExecutionData }
	| { error: Error & { description?: string | null } };

/** An error as it was first thrown: its description is restored, since a stop report appends to it. */
type Kept = Remembered & { description?: string | null };

const tries = new WeakMap<object, WeakMap<object, Kept>>();

export class EarlierTries {
	private readonly items: WeakMap<object, Kept> | undefined;

	private constructor(
		private readonly run: object | undefined,
		private readonly inputs: INodeExecutionData[],
	) {
		if (!run) return;
		this.items = tries.get(run) ?? new WeakMap();
		tries.set(run, this.items);
	}

	/**
	 * The memory of this node run. None without Retry On Fail (no try will follow), and none for a tool call: each
	 * call is a new question from the model with its own arguments, although n8n may hand every call of one agent
	 * run the same execute data and input item.
	 */
	static of(context: IExecuteFunctions, inputs: INodeExecutionData[]): EarlierTries {
		const retried = context.getNode().retryOnFail === true && !isToolRun(context);
		const run = retried ? (context.getExecuteData?.() as object | undefined) : undefined;
		return new EarlierTries(run, inputs);
	}

	/** What an earlier try did with this item, if it must not be sent again. */
	recall(itemIndex: number): Remembered | undefined {
		const kept = this.items?.get(this.inputs[itemIndex]);
		if (kept && 'error' in kept) kept.error.description = kept.description;
		return kept;
	}

	remember(itemIndex: number, outcome: Remembered): void {
		const kept: Kept =
			'error' in outcome ? { ...outcome, description: outcome.error.description } : outcome;
		this.items?.set(this.inputs[itemIndex], kept);
	}

	/** The run ended with nothing failed: n8n will not try it again. */
	forget(): void {
		if (this.run) tries.delete(this.run);
	}
}
