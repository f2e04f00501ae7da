import { sleep } from 'n8n-workflow';

export interface PipelineSteps<Prepared> {
	/** How many items there are: indexes 0..count-1. */
	count: number;
	/** At most this many `send`s run at once. */
	concurrency: number;
	/** At most this many items are prepared and waiting for a free sender (at least 1). */
	lookAhead: number;
	/**
	 * Synchronous work for one item (read, check, build), done in index order. If it throws, the error is
	 * kept and thrown by `take()` at that item's turn, as if the item had been prepared then.
	 */
	prepare: (index: number) => Prepared;
	/** The asynchronous part for one item; `take()` gives its prepared value. Must handle its own errors. */
	send: (index: number, take: () => Prepared) => Promise<void>;
	/** Once true, no further item is prepared or sent; the sends already running finish. */
	shouldStop?: () => boolean;
	/** Lets waiting I/O run before each item prepared ahead (default: one turn of the event loop). Never rejects. */
	yieldToEventLoop?: () => Promise<void>;
}

type Outcome<Prepared> = { ok: true; value: Prepared } | { ok: false; error: unknown };

/**
 * Sends items in index order with at most `concurrency` in flight, and prepares up to `lookAhead` items ahead
 * of the senders, so that a sender that comes free sends at once instead of first doing the next item's CPU
 * work. Preparing ahead happens between answers (it yields to the event loop before each item), so it fills
 * the time spent waiting for the service rather than delaying the handling of an answer.
 */
export async function prepareAheadAndSend<Prepared>(steps: PipelineSteps<Prepared>): Promise<void> {
	const { count, prepare, send } = steps;
	const lookAhead = Math.max(1, steps.lookAhead);
	const shouldStop = steps.shouldStop ?? (() => false);
	const yieldToEventLoop = steps.yieldToEventLoop ?? (async () => await sleep(0));

	const ready = new Map<number, Outcome<Prepared>>();
	let nextToPrepare = 0;
	let nextToSend = 0;

	const prepareNext = () => {
		const index = nextToPrepare++;
		try {
			ready.set(index, { ok: true, value: prepare(index) });
		} catch (error) {
			ready.set(index, { ok: false, error });
		}
	};
	const mayPrepareAhead = () =>
		nextToPrepare < count && nextToPrepare - nextToSend < lookAhead && !shouldStop();

	// One filler at a time: it runs while there is room ahead, and a sender that takes an item starts it again.
	let filling: Promise<void> | undefined;
	const fillAhead = async () => {
		while (mayPrepareAhead()) {
			await yieldToEventLoop();
			if (mayPrepareAhead()) prepareNext();
		}
	};
	const startFilling = () => {
		if (filling || !mayPrepareAhead()) return;
		filling = fillAhead().finally(() => (filling = undefined));
	};

	const sender = async () => {
		while (nextToSend < count && !shouldStop()) {
			const index = nextToSend++;
			// Nothing prepared yet (the start, or senders faster than the filler): prepare it now.
			if (index === nextToPrepare) prepareNext();
			const outcome = ready.get(index)!;
			ready.delete(index);
			startFilling();
			await send(index, () => {
				if (!outcome.ok) throw outcome.error;
				return outcome.value;
			});
		}
	};
	const senders = Math.max(1, Math.min(steps.concurrency, count));
	await Promise.all(Array.from({ length: senders }, sender));
	// Nothing keeps running after the run: the filler stops as soon as it sees the senders are done.
	while (filling) await filling;
}
