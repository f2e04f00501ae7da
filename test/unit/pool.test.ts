import { sleep } from 'n8n-workflow';

import { forEachConcurrently } from '../../nodes/InvoiceService/helpers/pool';
import { backoffMs } from '../../nodes/InvoiceService/transport/throttle';

describe('forEachConcurrently', () => {
	it('never runs more than the limit at once and visits every index once', async () => {
		let running = 0;
		let peak = 0;
		const seen: number[] = [];
		await forEachConcurrently(25, 4, async (index) => {
			running++;
			peak = Math.max(peak, running);
			await sleep(index % 3);
			seen.push(index);
			running--;
		});
		expect(peak).toBe(4);
		expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
	});

	it('stops handing out work once told to', async () => {
		const seen: number[] = [];
		await forEachConcurrently(
			100,
			1,
			async (index) => {
				seen.push(index);
			},
			() => seen.length >= 3,
		);
		expect(seen).toEqual([0, 1, 2]);
	});

	it('handles zero items', async () => {
		const worker = jest.fn();
		await forEachConcurrently(0, 5, worker);
		expect(worker).not.toHaveBeenCalled();
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
