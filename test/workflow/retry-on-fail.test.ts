import nock from 'nock';
import { sleep, type IDataObject } from 'n8n-workflow';

import { getBinaryBuffer, type OnError } from '../support/harness/run-node';
import {
	API,
	ORIGIN,
	customerParameters,
	invoiceRefusedOncePdfServed,
	runInvoiceService,
	type InvoiceServiceRun,
} from '../support/invoice-service';

// n8n's Retry On Fail (node settings retryOnFail / maxTries / waitBetweenTries) runs the whole node again with
// the same input items: these runs set it on the node, inside n8n-core's real WorkflowExecute.

afterEach(() => nock.cleanAll());

const people = (count: number) =>
	Array.from({ length: count }, (_, index) => ({
		first: 'Ada',
		last: `Lovelace ${index}`,
		email: `ada${index}@example.com`,
	}));
const itemOf = (body: unknown) => Number(/\d+/.exec((body as IDataObject).email as string)![0]);

/**
 * A create-customer service: `answer(item, timesSeenBefore)` gives the status for each request (200 creates
 * `cust_<item>`); records how often each item arrived.
 */
function service(answer: (item: number, seen: number) => number | 'hang') {
	const received = new Map<number, number>();
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(500)
		.reply(async (_uri, body) => {
			const item = itemOf(body);
			const seen = received.get(item) ?? 0;
			received.set(item, seen + 1);
			const status = answer(item, seen);
			if (status === 'hang') await sleep(2000);
			if (status === 200 || status === 'hang') {
				return [200, { status: 'success', response: { id: `cust_${item}`, name: 'Ada' } }];
			}
			return [status, { status: 'error', message: `refused ${item}` }];
		});
	return received;
}

const withRetry = (run: InvoiceServiceRun & { maxTries?: number }) =>
	runInvoiceService({
		...run,
		retryOnFail: true,
		maxTries: run.maxTries ?? 3,
		waitBetweenTries: 0,
	});

const hintsOf = (result: Awaited<ReturnType<typeof runInvoiceService>>) =>
	(result.taskData?.hints ?? []).map((hint) => hint.message).join('\n');

describe("n8n's Retry On Fail never sends a create twice", () => {
	it('Stop Workflow: a retry after a stop at item 7 returns items 0-6 from the first try and sends only 7 onwards', async () => {
		// Item 7 is refused once (a passing glitch), then accepted.
		const received = service((item, seen) => (item === 7 && seen === 0 ? 400 : 200));
		const result = await withRetry({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(10),
		});
		expect(result.status).toBe('success');
		const ids = result.outputs[0].map((item) => item.json.id);
		expect(ids).toEqual(people(10).map((_, index) => `cust_${index}`));
		expect(result.outputs[0].map((item) => item.pairedItem)).toEqual(
			people(10).map((_, item) => ({ item })),
		);
		for (let item = 0; item < 10; item++) expect(received.get(item)).toBe(item === 7 ? 2 : 1);
		expect(hintsOf(result)).toMatch(/7 item\(s\) were created in an earlier try/);
	});

	it.each<[OnError, number]>([
		['continueErrorOutput', 1],
		['continueRegularOutput', 0],
	])(
		'%s: a refused first item makes n8n retry, and every good item is still created once',
		async (onError, errorOutput) => {
			const received = service((item) => (item === 0 ? 400 : 200));
			const result = await withRetry({
				parameters: customerParameters({ options: { concurrency: 3 } }),
				items: people(8),
				onError,
				maxTries: 4,
			});
			expect(result.status).toBe('success');
			// n8n tried the node 4 times (the first item stayed an error item): item 0 was sent each time, the rest once.
			expect(received.get(0)).toBe(4);
			for (let item = 1; item < 8; item++) expect(received.get(item)).toBe(1);
			const errors = result.outputs[errorOutput].filter((item) => item.json.error);
			expect(errors).toHaveLength(1);
			expect(errors[0].pairedItem).toEqual({ item: 0 });
			const created = result.outputs[0].filter((item) => item.json.id).map((item) => item.json.id);
			expect(created).toEqual(
				people(8)
					.slice(1)
					.map((_, index) => `cust_${index + 1}`),
			);
			expect(hintsOf(result)).toMatch(/7 item\(s\) were created in an earlier try/);
		},
	);

	it('an item whose outcome is unknown (cut by the Timeout) is not sent again by the retry', async () => {
		// Item 2 hangs past the Timeout in every try; item 0 is refused in the first try only, which (as the first
		// item, an error item) makes n8n try the node again.
		const received = service((item, seen) =>
			item === 2 ? 'hang' : item === 0 && seen === 0 ? 400 : 200,
		);
		const result = await withRetry({
			parameters: customerParameters({ options: { concurrency: 1, timeout: 1000 } }),
			items: people(6),
			onError: 'continueErrorOutput',
		});
		expect(received.get(2)).toBe(1);
		expect(received.get(0)).toBe(2);
		const errors = result.outputs[1];
		expect(errors).toHaveLength(1);
		expect(errors[0].pairedItem).toEqual({ item: 2 });
		expect(String((errors[0].json.error as IDataObject).message)).toMatch(/outcome unknown/i);
		expect(hintsOf(result)).toMatch(
			/1 item\(s\) were not sent again: an earlier try sent them and their outcome is unknown/,
		);
	});

	it('an invoice created with its PDF in an earlier try comes back with the same id and the same file, not fetched again', async () => {
		const scenario = invoiceRefusedOncePdfServed(2);
		const result = await scenario.run({ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 });
		// (The harness keeps the first try's error; the run itself succeeded.)
		expect(result.status).toBe('success');
		expect(scenario.invoices()).toBe(3);
		expect(scenario.files.isDone()).toBe(true);
		const [first, second] = result.outputs[0];
		expect(first.json.invoice_id).toBe('inv_1');
		expect(second.json.invoice_id).toBe('inv_3');
		expect((await getBinaryBuffer(first, 'data')).equals(scenario.pdf)).toBe(true);
		expect(hintsOf(result)).toMatch(/1 item\(s\) were created in an earlier try .* returned/);
	});

	it('Stop Workflow with an unknown outcome: every try sends the safe items and none sends the unknown one again', async () => {
		const received = service((item, seen) => (item === 2 && seen === 0 ? 500 : 200));
		const result = await withRetry({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(6),
		});
		expect(result.status).toBe('error');
		for (let item = 0; item < 6; item++) expect(received.get(item)).toBe(1);
		const description = String(result.error?.description);
		expect(description).toMatch(/Outcome unknown, not sent again: item 2 \(code [2-9A-Z]{8}\)\./);
		expect(description).toMatch(/Already created in this run before it stopped: item 0 .*item 5/);
	});

	it('Execute Once with Retry On Fail: only the first item is created, once, and paired to item 0', async () => {
		// Refused once (so n8n tries again), then accepted.
		const received = service((_item, seen) => (seen === 0 ? 400 : 200));
		const result = await withRetry({
			parameters: customerParameters(),
			items: people(3),
			executeOnce: true,
		});
		expect(result.status).toBe('success');
		expect(result.outputs[0].map((item) => [item.json.id, item.pairedItem])).toEqual([
			['cust_0', { item: 0 }],
		]);
		expect([...received.entries()]).toEqual([[0, 2]]);
	});

	it('nothing carries over to another execution: the same items in a new execution are sent again', async () => {
		const received = service(() => 200);
		for (let execution = 0; execution < 2; execution++) {
			const result = await withRetry({ parameters: customerParameters(), items: people(3) });
			expect(result.outputs[0]).toHaveLength(3);
		}
		for (let item = 0; item < 3; item++) expect(received.get(item)).toBe(2);
	});
});
