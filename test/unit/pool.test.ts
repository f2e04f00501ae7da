import { sleep } from 'n8n-workflow';

import { prepareAheadAndSend } from '../../nodes/InvoiceService/helpers/pool';
import { backoffMs } from '../../nodes/InvoiceService/transport/pace';

const indexes = (count: number) => Array.from({ length: count }, (_, index) => index);
/** A yield that lets only promise callbacks run, not timers: the filler then fills up before any send returns. */
const promiseTurn = async () => {};

/** Records what the pipeline does, step by step, with sends that take `latency(index)` ms. */
function recorder(latency: (index: number) => number = () => 1) {
	const events: string[] = [];
	let running = 0;
	let peakRunning = 0;
	let taken = 0;
	let peakWaiting = 0;
	const prepared: number[] = [];
	const sent: number[] = [];
	return {
		events,
		prepared,
		sent,
		peaks: () => ({ running: peakRunning, waiting: peakWaiting }),
		prepare: (index: number) => {
			prepared.push(index);
			events.push(`prepare ${index}`);
			peakWaiting = Math.max(peakWaiting, prepared.length - taken);
			return `body ${index}`;
		},
		send: async (index: number, take: () => string) => {
			taken++;
			expect(take()).toBe(`body ${index}`);
			sent.push(index);
			events.push(`send ${index}`);
			running++;
			peakRunning = Math.max(peakRunning, running);
			await sleep(latency(index));
			running--;
		},
	};
}

describe('prepareAheadAndSend', () => {
	it('prepares and sends every index once, in index order, with at most `concurrency` in flight', async () => {
		const steps = recorder((index) => index % 3);
		await prepareAheadAndSend({ count: 25, concurrency: 4, lookAhead: 4, ...steps });
		expect(steps.prepared).toEqual(indexes(25));
		expect(steps.sent).toEqual(indexes(25));
		expect(steps.peaks().running).toBe(4);
	});

	it.each([
		[1, 1],
		[3, 2],
		[4, 7],
	])(
		'holds at most lookAhead items prepared and not yet sent (concurrency %p, lookAhead %p)',
		async (concurrency, lookAhead) => {
			const steps = recorder(() => 5);
			await prepareAheadAndSend({
				count: 30,
				concurrency,
				lookAhead,
				...steps,
				yieldToEventLoop: promiseTurn,
			});
			expect(steps.sent).toEqual(indexes(30));
			// While sends are in flight, the next items are prepared, up to the bound and never past it.
			expect(steps.peaks().waiting).toBe(lookAhead);
		},
	);

	it('prepares the next items while the first ones are in flight, yielding before each', async () => {
		const steps = recorder(() => 20);
		await prepareAheadAndSend({
			count: 4,
			concurrency: 2,
			lookAhead: 2,
			...steps,
			yieldToEventLoop: async () => {
				steps.events.push('yield');
			},
		});
		// 0 and 1 go out at once; 2 and 3 are prepared during their flight, then sent without a prepare between.
		expect(steps.events).toEqual([
			'prepare 0',
			'yield',
			'send 0',
			'prepare 1',
			'send 1',
			'prepare 2',
			'yield',
			'prepare 3',
			'send 2',
			'send 3',
		]);
	});

	it('by default prepares ahead only after a turn of the event loop, so a waiting answer is handled first', async () => {
		const events: string[] = [];
		let answered = false;
		// An "answer" already due when the first item goes out: a timer set before the pool sets its own. Timers
		// of the same delay run in the order they were set, so its callback runs before the pool's turn ends.
		const dueAnswer = sleep(0).then(() => (answered = true));
		// Item 0's send ends only once item 2 is prepared, so the order holds however slow the machine is.
		let endSend0!: () => void;
		const send0Ended = new Promise<void>((resolve) => (endSend0 = resolve));
		await prepareAheadAndSend({
			count: 3,
			concurrency: 1,
			lookAhead: 2,
			prepare: (index) => {
				events.push(`prepare ${index}, answer handled: ${answered}`);
				if (index === 2) endSend0();
				return index;
			},
			send: async (index) => {
				events.push(`send ${index}`);
				if (index === 0) await send0Ended;
			},
		});
		await dueAnswer;
		expect(events).toEqual([
			'prepare 0, answer handled: false',
			'send 0',
			'prepare 1, answer handled: true',
			'prepare 2, answer handled: true',
			'send 1',
			'send 2',
		]);
	});

	it('keeps a preparation error for the item and throws it from take() at its turn', async () => {
		const outcomes: string[] = [];
		await prepareAheadAndSend({
			count: 4,
			concurrency: 1,
			lookAhead: 3,
			prepare: (index) => {
				if (index === 2) throw new Error('bad field in item 2');
				return index;
			},
			send: async (index, take) => {
				await sleep(5);
				try {
					outcomes.push(`sent ${take()}`);
				} catch (error) {
					outcomes.push(`item ${index}: ${(error as Error).message}`);
				}
			},
		});
		expect(outcomes).toEqual(['sent 0', 'sent 1', 'item 2: bad field in item 2', 'sent 3']);
	});

	it('once told to stop, neither sends nor prepares further items; those in flight finish', async () => {
		const steps = recorder(() => 10);
		let finished = 0;
		await prepareAheadAndSend({
			count: 100,
			concurrency: 3,
			lookAhead: 3,
			prepare: steps.prepare,
			send: async (index, take) => {
				await steps.send(index, take);
				finished++;
			},
			shouldStop: () => steps.sent.includes(4),
			yieldToEventLoop: promiseTurn,
		});
		expect(steps.sent).toEqual([0, 1, 2, 3, 4]);
		expect(finished).toBe(5);
		// At most the look-ahead was prepared past the last item sent, and nothing after the stop.
		expect(Math.max(...steps.prepared)).toBeLessThanOrEqual(4 + 3);
		const preparedAtStop = steps.prepared.length;
		await sleep(20);
		expect(steps.prepared).toHaveLength(preparedAtStop);
	});

	it('leaves nothing running when it returns', async () => {
		let yields = 0;
		const steps = recorder(() => 0);
		await prepareAheadAndSend({
			count: 10,
			concurrency: 2,
			lookAhead: 5,
			...steps,
			yieldToEventLoop: async () => {
				yields++;
				await sleep(3);
			},
		});
		const yieldsAtReturn = yields;
		const preparedAtReturn = steps.prepared.length;
		await sleep(30);
		expect(yields).toBe(yieldsAtReturn);
		expect(steps.prepared).toHaveLength(preparedAtReturn);
		expect(steps.sent).toEqual(indexes(10));
	});

	it('handles zero items', async () => {
		const prepare = jest.fn();
		const send = jest.fn();
		await prepareAheadAndSend({ count: 0, concurrency: 5, lookAhead: 5, prepare, send });
		expect(prepare).not.toHaveBeenCalled();
		expect(send).not.toHaveBeenCalled();
	});
});

describe('backoffMs', () => {
	it('doubles with jitter between half and full, capped at 30 s', () => {
		expect(backoffMs(0, () => 0)).toBe(500);
		expect(backoffMs(0, () => 1)).toBe(1000);
		expect(backoffMs(3, () => 1)).toBe(8000);
		expect(backoffMs(10, () => 1)).toBe(30000);
	});
});
