import nock from 'nock';
import { sleep, type IDataObject } from 'n8n-workflow';

import { resources } from '../../nodes/InvoiceService/actions/resources';
import { API, ORIGIN, customerParameters, runInvoiceService } from '../support/invoice-service';

/**
 * Wraps Customer → Create in the router's operation table to record, in order, when each item is prepared
 * (its parameters read and checked), handed to a worker to send, and done.
 */
function recordCustomerCreate() {
	const table = resources.customer.operations;
	const original = table.create;
	const events: string[] = [];
	table.create = {
		...original,
		prepare(itemIndex) {
			events.push(`prepare ${itemIndex}`);
			return original.prepare.call(this, itemIndex);
		},
		async create(prepared, itemIndex, client) {
			events.push(`send ${itemIndex}`);
			try {
				return await original.create.call(this, prepared, itemIndex, client);
			} finally {
				events.push(`done ${itemIndex}`);
			}
		},
	};
	const indexesOf = (step: string) =>
		events
			.filter((event) => event.startsWith(`${step} `))
			.map((event) => Number(event.split(' ')[1]));
	return { events, indexesOf, restore: () => (table.create = original) };
}

let recorder: ReturnType<typeof recordCustomerCreate>;
beforeEach(() => (recorder = recordCustomerCreate()));
afterEach(() => {
	recorder.restore();
	nock.cleanAll();
});

const person = (index: number) => ({
	first: 'Ada',
	last: 'Lovelace',
	email: `ada${index}@example.com`,
});
const indexOfEmail = (body: unknown) =>
	Number(/\d+/.exec((body as IDataObject).email as string)![0]);

/** Answers every create-customer after `delayMs(item)`, with id cust_<item>; records the items received. */
function serviceAnswering(
	delayMs: (item: number) => number,
	status: (item: number) => number = () => 200,
) {
	const received: number[] = [];
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(1000)
		.delay(1)
		.reply(async (_uri, body) => {
			const item = indexOfEmail(body);
			received.push(item);
			await sleep(delayMs(item));
			const answer = status(item) === 200 ? { id: `cust_${item}` } : { message: 'exists' };
			return [status(item), { status: status(item) === 200 ? 'success' : 'error', ...answer }];
		});
	return received;
}

describe('the router prepares items ahead of its workers', () => {
	it('prepares at most one item per worker ahead, sends in input order, and keeps output order and pairedItem', async () => {
		const count = 12;
		const concurrency = 3;
		// Answers come back out of order: later items are faster.
		const received = serviceAnswering((item) => 20 + 10 * ((count - item) % 4));
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency } }),
			items: Array.from({ length: count }, (_, index) => person(index)),
		});

		expect(result.error).toBeUndefined();
		expect(result.outputs[0].map((item) => [item.json.id, item.pairedItem])).toEqual(
			Array.from({ length: count }, (_, item) => [`cust_${item}`, { item }]),
		);
		expect(recorder.indexesOf('prepare')).toEqual(Array.from({ length: count }, (_, i) => i));
		expect(recorder.indexesOf('send')).toEqual(Array.from({ length: count }, (_, i) => i));
		expect([...received].sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));

		// The bound: never more than `concurrency` items prepared and not yet handed to a worker.
		let waiting = 0;
		let inFlight = 0;
		for (const event of recorder.events) {
			if (event.startsWith('prepare')) waiting++;
			if (event.startsWith('send')) {
				waiting--;
				inFlight++;
			}
			if (event.startsWith('done')) inFlight--;
			expect(waiting).toBeLessThanOrEqual(concurrency);
			expect(inFlight).toBeLessThanOrEqual(concurrency);
		}
		// And it is used: every item after the first wave was prepared before a worker came free for it.
		for (let item = concurrency; item < count; item++) {
			const sendAt = recorder.events.indexOf(`send ${item}`);
			const doneBefore = recorder.events
				.map((event, at) => (event.startsWith('done') && at < sendAt ? at : -1))
				.filter((at) => at >= 0);
			const lastDoneBefore = Math.max(...doneBefore);
			expect(recorder.events.indexOf(`prepare ${item}`)).toBeLessThan(lastDoneBefore);
		}
	});

	it('stops at the first failure: items prepared ahead are not sent, and the report lists what was created', async () => {
		const count = 10;
		// Item 0 is refused quickly; items 1 and 2 are still in flight then and succeed.
		const received = serviceAnswering(
			(item) => (item === 0 ? 5 : 60),
			(item) => (item === 0 ? 409 : 200),
		);
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 3, maxRetryWait: 0 } }),
			items: Array.from({ length: count }, (_, index) => person(index)),
		});

		expect(result.error?.message).toBe(
			'A customer with the e-mail ada0@example.com already exists',
		);
		expect(result.error?.description).toContain(
			'Already created in this run before it stopped: item 1 (cust_1), item 2 (cust_2). Retry of this execution returns them without creating them again.',
		);
		expect(result.error?.description).toContain(
			'7 other item(s) were not sent: once the cause above is dealt with, Retry of this execution sends them.',
		);
		expect([...received].sort()).toEqual([0, 1, 2]);
		expect(recorder.indexesOf('send')).toEqual([0, 1, 2]);
		// Item 3 was prepared ahead while the first three were in flight, and still never sent.
		expect(recorder.indexesOf('prepare')).toContain(3);
		expect(Math.max(...recorder.indexesOf('prepare'))).toBeLessThanOrEqual(2 + 3);
	});

	it('a bad field in an item prepared ahead fails that item at its turn, after the items before it were sent', async () => {
		const received = serviceAnswering(() => 20);
		const items = Array.from({ length: 6 }, (_, index) => person(index));
		items[3] = { ...items[3], email: 'not-an-address' };
		const result = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items,
		});

		expect(result.error?.message).toBe(
			'Item 3: Email must be an e-mail address like name@example.com, got "not-an-address"',
		);
		expect(result.error?.description).toContain('Nothing was sent to the service for this item.');
		expect(result.error?.description).toContain(
			'Already created in this run before it stopped: item 0 (cust_0), item 1 (cust_1), item 2 (cust_2).',
		);
		expect(result.error?.description).toContain(
			'2 other item(s) were not sent: once the cause above is dealt with, Retry of this execution sends them.',
		);
		expect(received).toEqual([0, 1, 2]);
		// Item 3 was read and refused while item 2 was still in flight.
		expect(recorder.events.indexOf('prepare 3')).toBeLessThan(recorder.events.indexOf('done 2'));
	});
});
