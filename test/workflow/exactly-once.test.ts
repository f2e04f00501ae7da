import { randomUUID } from 'node:crypto';

import nock from 'nock';
import { sleep, type IDataObject } from 'n8n-workflow';

import { deduplicator, getBinaryBuffer } from '../support/harness/run-node';
import {
	API,
	ORIGIN,
	customerParameters,
	invoiceParameters,
	invoiceRefusedOncePdfServed,
	runInvoiceService,
	type InvoiceServiceRun,
	people,
} from '../support/invoice-service';

// The same work reaching the node again in a later execution: a failed execution retried from n8n's executions
// list (replayed here as n8n's ExecutionService.retry does, from the saved execution), and the same event
// delivered twice (Idempotency Key, on n8n's processed-data store; in memory here, with the database's
// read-then-write window).

afterEach(() => {
	nock.cleanAll();
	deduplicator.clear();
});

const itemOf = (body: unknown) => Number(/\d+/.exec((body as IDataObject).email as string)![0]);

/**
 * A create-customer service: `answer(item, timesSeenBefore)` gives the status for each request (200 creates
 * `cust_<item>_<n>`, n counting the creates of that item, so a duplicate shows; 'created 500' creates it, then
 * answers HTTP 500); records how often each arrived.
 */
function service(
	answer: (item: number, seen: number) => number | 'hang' | 'created 500' = () => 200,
) {
	const received = new Map<number, number>();
	const created = new Map<number, number>();
	nock(ORIGIN)
		.post(`${API}/create-customer`)
		.times(500)
		.reply(async (_uri, body) => {
			const item = itemOf(body);
			const seen = received.get(item) ?? 0;
			received.set(item, seen + 1);
			const status = answer(item, seen);
			if (status === 'hang') await sleep(2000);
			if (status === 200 || status === 'hang' || status === 'created 500') {
				const n = (created.get(item) ?? 0) + 1;
				created.set(item, n);
				if (status === 'created 500') return [500, { status: 'error', message: 'Internal error' }];
				return [200, { status: 'success', response: { id: `cust_${item}_${n}`, name: 'Ada' } }];
			}
			return [status, { status: 'error', message: `refused ${item}` }];
		});
	return { received, created };
}

const hintsOf = (result: { taskData?: { hints?: Array<{ message: string }> } }) =>
	(result.taskData?.hints ?? []).map((hint) => hint.message).join('\n');
const idsOf = (items: Array<{ json: IDataObject }>) => items.map((item) => item.json.id);
/** The resend codes an error's words give ("enter <code> in Options → Resend Unknown Outcomes Of"), in order. */
const codesIn = (text: unknown) =>
	[...String(text).matchAll(/enter ([2-9A-Z]{8}) in Options → Resend Unknown Outcomes Of/g)].map(
		(match) => match[1],
	);
/** An earlier recovery's code, still in the option. */
const LEFT_ON = 'K7QM2XR9';

describe('a failed execution retried from the executions list never creates again', () => {
	it('Stop at item 7 of 12 (refused once): the retry returns 0-6 without sending and sends 7-11', async () => {
		const { received, created } = service((item, seen) => (item === 7 && seen === 0 ? 400 : 200));
		const first = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(12),
		});
		expect(first.status).toBe('error');
		expect(String(first.error?.description)).toMatch(
			/Already created in this run before it stopped: item 0 \(cust_0_1\)/,
		);

		const retried = await first.retry();
		expect(retried.status).toBe('success');
		// Each line once, each output item paired with its own record.
		expect(idsOf(retried.outputs[0])).toEqual(people(12).map((_, item) => `cust_${item}_1`));
		expect(retried.outputs[0].map((item) => item.pairedItem)).toEqual(
			people(12).map((_, item) => ({ item })),
		);
		for (let item = 0; item < 12; item++) {
			expect(received.get(item)).toBe(item === 7 ? 2 : 1);
			expect(created.get(item)).toBe(1);
		}
		expect(hintsOf(retried)).toMatch(/7 item\(s\) were created in an earlier try/);
	});

	it('"with current workflow", saved unchanged: nothing created is sent again', async () => {
		const { received, created } = service((item, seen) => (item === 3 && seen === 0 ? 400 : 200));
		const parameters = customerParameters({ options: { concurrency: 1 } });
		const first = await runInvoiceService({ parameters, items: people(5) });
		expect(first.status).toBe('error');
		const retried = await first.retry({ currentParameters: parameters });
		expect(retried.status).toBe('success');
		expect(idsOf(retried.outputs[0])).toEqual(people(5).map((_, item) => `cust_${item}_1`));
		expect([...received.entries()].sort()).toEqual([
			[0, 1],
			[1, 1],
			[2, 1],
			[3, 2],
			[4, 1],
		]);
		expect([...created.values()].every((count) => count === 1)).toBe(true);
	});

	it('after an edit that changes every request, the retry creates nothing again and says which items changed', async () => {
		const { received, created } = service((item, seen) => (item === 2 && seen === 0 ? 400 : 200));
		const first = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(4),
		});
		expect(first.status).toBe('error');
		const edited = customerParameters({
			lastName: '={{ $json.last.trim() }} (edited)',
			options: { concurrency: 1 },
		});
		const retried = await first.retry({ currentParameters: edited });
		expect(retried.status).toBe('success');
		expect([...received.entries()].sort()).toEqual([
			[0, 1],
			[1, 1],
			[2, 2],
			[3, 1],
		]);
		expect([...created.values()].every((count) => count === 1)).toBe(true);
		// Items 0 and 1 return what was created then (the same fields), and the hint names them.
		expect(idsOf(retried.outputs[0])).toEqual(['cust_0_1', 'cust_1_1', 'cust_2_1', 'cust_3_1']);
		expect(retried.outputs[0][0].json).toEqual({ id: 'cust_0_1', name: 'Ada' });
		expect(hintsOf(retried)).toContain(
			'The request of item 0, item 1 changed since they were created',
		);
		expect(hintsOf(retried)).toMatch(/2 item\(s\) were created in an earlier try .* rebuilt/);
	});

	it('an unknown outcome (HTTP 500 on line 7 of 12): the retry sends the safe items, then Resend Unknown Outcomes sends line 7', async () => {
		const { received, created } = service((item, seen) => (item === 6 && seen === 0 ? 500 : 200));
		const parameters = customerParameters({ options: { concurrency: 1 } });
		const first = await runInvoiceService({ parameters, items: people(12) });
		expect(first.status).toBe('error');
		expect(received.get(7)).toBeUndefined();

		// Retry: 0-5 returned, 6 not sent, 7-11 sent; then the stop, naming item 6 and the way forward.
		const retried = await first.retry();
		expect(retried.status).toBe('error');
		expect(received.get(6)).toBe(1);
		for (let item = 7; item < 12; item++) expect(received.get(item)).toBe(1);
		expect(created.size).toBe(11);
		const [code] = codesIn(first.error?.description);
		expect(code).toMatch(/^[2-9A-Z]{8}$/);
		const description = String(retried.error?.description);
		expect(description).toMatch(/Not sent again/);
		expect(description).toContain(
			`Outcome unknown, not sent again: item 6 (code ${code}). Check the service; if the record is not there, enter ${code} in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow.`,
		);
		expect(description).not.toMatch(/other item\(s\) were not sent/);

		// A second plain retry changes nothing: still no request for item 6, and still the same code.
		const again = await retried.retry();
		expect(again.status).toBe('error');
		expect(received.get(6)).toBe(1);
		expect(new Set(codesIn(again.error?.description))).toEqual(new Set([code]));

		// The user checked: entered the code, retried with the current workflow. Line 7 is sent, once.
		const resent = await again.retry({
			currentParameters: customerParameters({
				options: { concurrency: 1, resendUnknownOf: code },
			}),
		});
		expect(resent.status).toBe('success');
		expect(idsOf(resent.outputs[0])).toEqual(people(12).map((_, item) => `cust_${item}_1`));
		expect(received.get(6)).toBe(2);
		for (let item = 0; item < 12; item++) expect(created.get(item)).toBe(1);
		expect(hintsOf(resent)).toContain(
			`1 item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: item 6 (code ${code}). Each code is now used: it sends nothing again, and the option can be cleared.`,
		);
	});

	it('issue 35: a code left in the option from an earlier recovery; line 3 of 12 created, then HTTP 500; Retry: 12 invoices, line 3 once, and the error gives line 3 a code of its own', async () => {
		const { received, created } = service((item, seen) =>
			item === 2 && seen === 0 ? 'created 500' : 200,
		);
		// Saved with the code of an earlier recovery: the execution's workflow, which Retry runs again.
		const parameters = customerParameters({
			options: { concurrency: 1, resendUnknownOf: LEFT_ON },
		});
		const first = await runInvoiceService({ parameters, items: people(12) });
		expect(first.status).toBe('error');
		const [code] = codesIn(first.error?.description);
		expect(code).toMatch(/^[2-9A-Z]{8}$/);
		expect(code).not.toBe(LEFT_ON);

		const retried = await first.retry();
		expect(retried.status).toBe('error');
		// Before: line 3 sent again, 13 invoices.
		expect(received.get(2)).toBe(1);
		for (let item = 0; item < 12; item++) expect(created.get(item)).toBe(1);
		const description = String(retried.error?.description);
		expect(description).toContain(
			`Outcome unknown, not sent again: item 2 (code ${code}). Check the service; if the record is not there, enter ${code} in Options → Resend Unknown Outcomes Of`,
		);
		expect(description).toContain(
			`Options → Resend Unknown Outcomes Of: ${LEFT_ON} named no unknown outcome of this run, so nothing was sent again for it (a code is used once, and a later unknown outcome gets a code of its own). Clear the option, or enter the code its error gives.`,
		);
		// "With current workflow", the option still as it was: nothing changes.
		const again = await retried.retry({ currentParameters: parameters });
		expect(again.status).toBe('error');
		expect(received.get(2)).toBe(1);
	});

	it('a code left in the option of a run with nothing unknown: the run goes on, and a hint says the code named nothing; a value that is not a code is refused, naming the option', async () => {
		const { received } = service();
		const run = await runInvoiceService({
			parameters: customerParameters({ options: { resendUnknownOf: LEFT_ON } }),
			items: people(2),
		});
		expect(run.status).toBe('success');
		expect(hintsOf(run)).toContain(
			`Options → Resend Unknown Outcomes Of: ${LEFT_ON} named no unknown outcome of this run, so nothing was sent again for it`,
		);
		const refused = await runInvoiceService({
			parameters: customerParameters({ options: { resendUnknownOf: 'true' } }),
			items: people(2),
		});
		expect(refused.status).toBe('error');
		expect(refused.error?.message).toContain(
			'Resend Unknown Outcomes Of must list resend codes, got true',
		);
		expect(refused.error?.description).toContain('(8 letters and digits each, e.g. K7QM2XR9)');
		expect(received.size).toBe(2);
	});

	it('the left-on code resends nothing; the new code resends once; a resend that ends unknown again needs its own new code', async () => {
		// Line 3 gets HTTP 500 twice (nothing created), then 200.
		const { received, created } = service((item, seen) => (item === 2 && seen < 2 ? 500 : 200));
		const leftOn = customerParameters({ options: { concurrency: 1, resendUnknownOf: LEFT_ON } });
		const first = await runInvoiceService({ parameters: leftOn, items: people(4) });
		const [code] = codesIn(first.error?.description);
		const retried = await first.retry();
		expect(retried.status).toBe('error');
		expect(received.get(2)).toBe(1);

		// The user checked (no record) and entered the new code beside the old one: line 3 is sent again, and fails
		// again (500): its new outcome has a new code.
		const withCode = (codes: string) =>
			customerParameters({ options: { concurrency: 1, resendUnknownOf: codes } });
		const resent = await retried.retry({ currentParameters: withCode(`${LEFT_ON}, ${code}`) });
		expect(resent.status).toBe('error');
		expect(received.get(2)).toBe(2);
		const [newCode] = codesIn(resent.error?.description);
		expect(newCode).toMatch(/^[2-9A-Z]{8}$/);
		expect([LEFT_ON, code]).not.toContain(newCode);
		expect(String(resent.error?.description)).toContain(
			`1 item(s) whose outcome was unknown were sent again, as Options → Resend Unknown Outcomes Of asks: item 2 (code ${code}).`,
		);

		// Both codes left in the option: the second unknown outcome is not sent again.
		const leftAgain = await resent.retry({ currentParameters: withCode(`${LEFT_ON}, ${code}`) });
		expect(leftAgain.status).toBe('error');
		expect(received.get(2)).toBe(2);
		expect(codesIn(leftAgain.error?.description)).toContain(newCode);

		// Its own code, after a check: sent once more, created once.
		const done = await leftAgain.retry({ currentParameters: withCode(newCode) });
		expect(done.status).toBe('success');
		expect(received.get(2)).toBe(3);
		for (let item = 0; item < 4; item++) expect(created.get(item)).toBe(1);
		expect(idsOf(done.outputs[0])).toEqual(['cust_0_1', 'cust_1_1', 'cust_2_1', 'cust_3_1']);
		expect(hintsOf(done)).toContain(`item 2 (code ${newCode})`);
	});

	it('the original retried a second time after its first retry failed: what the first retry created is not created again, and each such item says where it is', async () => {
		// Item 6 gets no answer (500) in the first run; item 9 is refused (400) in the first retry, which stops there.
		const { received, created } = service((item, seen) =>
			item === 6 && seen === 0 ? 500 : item === 9 && seen === 0 ? 400 : 200,
		);
		const parameters = customerParameters({ options: { concurrency: 1 } });
		const first = await runInvoiceService({ parameters, items: people(12) });
		expect(first.status).toBe('error');

		const retried = await first.retry();
		expect(retried.status).toBe('error');
		expect([7, 8, 9].map((item) => [received.get(item), created.get(item)])).toEqual([
			[1, 1],
			[1, 1],
			[1, undefined],
		]);

		// The original again: 0-5 returned, 6 not sent (unknown), 7 and 8 not sent (the first retry created them),
		// 9 sent (refused there: certainly not created), 10 and 11 sent (never reached).
		const again = await first.retry();
		expect(again.status).toBe('error');
		for (let item = 0; item < 12; item++)
			expect(created.get(item)).toBe(item === 6 ? undefined : 1);
		expect([6, 7, 8, 9, 10].map((item) => received.get(item))).toEqual([1, 1, 1, 2, 1]);
		const description = String(again.error?.description);
		expect(description).toContain(
			"Created by another retry of this execution, not sent again: item 7, item 8. That retry's execution has their output",
		);
		expect(description).toContain('Outcome unknown, not sent again: item 6 (code ');

		// A third retry of the original: nothing more is sent but item 6's way forward (the user checked).
		const [code] = codesIn(first.error?.description);
		const resent = await first.retry({
			currentParameters: customerParameters({
				options: { concurrency: 1, resendUnknownOf: code },
			}),
		});
		expect(resent.status).toBe('error');
		expect(received.get(6)).toBe(2);
		for (let item = 0; item < 12; item++) expect(created.get(item)).toBe(1);
		expect(String(resent.error?.description)).toContain(
			'Created by another retry of this execution, not sent again: item 7, item 8, item 9, item 10, item 11.',
		);
	});

	it('a retry of a retry follows its own record, and the retry keys only where a retry sends', async () => {
		const { received, created } = service((item, seen) => (item === 3 && seen < 2 ? 400 : 200));
		const parameters = customerParameters({ options: { concurrency: 1 } });
		const first = await runInvoiceService({ parameters, items: people(5) });
		expect(first.status).toBe('error');
		// The first run is no retry: it claims no key of the store.
		expect(deduplicator.rows.size).toBe(0);
		const retried = await first.retry();
		expect(retried.status).toBe('error');
		const third = await retried.retry();
		expect(third.status).toBe('success');
		expect(idsOf(third.outputs[0])).toEqual(people(5).map((_, item) => `cust_${item}_1`));
		expect(received.get(3)).toBe(3);
		for (let item = 0; item < 5; item++) expect(created.get(item)).toBe(1);
	});

	it('the stop report names at most 50 items of a kind, then counts the rest', async () => {
		service((item) => (item === 59 ? 400 : 200));
		const first = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(61),
		});
		const description = String(first.error?.description);
		const listed = [...description.matchAll(/item (\d+) \(cust_\d+_1\)/g)];
		expect(listed).toHaveLength(50);
		expect(description).toContain(
			'item 49 (cust_49_1) and 9 more. Retry of this execution returns them',
		);
		expect(description).toContain('1 other item(s) were not sent');
	});

	it('an invoice created before the stop comes back with its PDF downloaded again', async () => {
		const scenario = invoiceRefusedOncePdfServed(3);
		const first = await scenario.run();
		expect(first.status).toBe('error');
		const retried = await first.retry();
		expect(retried.status).toBe('success');
		expect(scenario.invoices()).toBe(3);
		expect(scenario.files.isDone()).toBe(true);
		const [one, two] = retried.outputs[0];
		expect([one.json.invoice_id, two.json.invoice_id]).toEqual(['inv_1', 'inv_3']);
		// The same fields as its first output: the service's answer, kept in the record.
		expect(one.json).toEqual({
			invoice_id: 'inv_1',
			status: 'sent',
			download_url: 'https://app.example.com/files/inv_1.pdf',
		});
		expect((await getBinaryBuffer(one, 'data')).equals(scenario.pdf)).toBe(true);
	});

	it('an invoice whose PDF failed after it was created: the next try only downloads the PDF', async () => {
		const creates = nock(ORIGIN)
			.post(`${API}/create-invoice`)
			.once()
			.reply(200, {
				invoice_id: 'inv_1',
				status: 'sent',
				download_url: `${ORIGIN}/files/inv_1.pdf`,
			});
		const pdf = Buffer.from('%PDF-1.4 inv_1');
		nock(ORIGIN).get('/files/inv_1.pdf').once().reply(404, 'not yet');
		nock(ORIGIN).get('/files/inv_1.pdf').once().reply(200, pdf);
		const result = await runInvoiceService({
			parameters: invoiceParameters({ options: { downloadPdf: true } }),
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});
		expect(result.status).toBe('success');
		expect(creates.isDone()).toBe(true);
		expect(result.outputs[0][0].json.invoice_id).toBe('inv_1');
		expect((await getBinaryBuffer(result.outputs[0][0], 'data')).equals(pdf)).toBe(true);
	});

	it("n8n's record on the saved execution holds no binary data and no key", async () => {
		service((item) => (item === 1 ? 400 : 200));
		const first = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(2),
		});
		// The failed node's execute data, as n8n saves it with the execution (the input items are saved anyway).
		const [executeData] = first.run.data.executionData!.nodeExecutionStack;
		const record = JSON.stringify((executeData as unknown as IDataObject).invoiceServiceRunRecord);
		expect(record).toContain('cust_0_1');
		expect(record).not.toContain('test-key-42');
		expect(record).not.toContain('ada0@example.com');
		expect(JSON.stringify(first.run.data)).not.toContain('test-key-42');
	});
});

describe('the stop report after Retry On Fail', () => {
	/** Item 0 is refused (for sure) in every try, slowly in the first: meanwhile the other worker creates more. */
	const slowRefusalOfItem0 = (other: (item: number, seen: number) => number = () => 200) => {
		const received = new Map<number, number>();
		const created: number[] = [];
		nock(ORIGIN)
			.post(`${API}/create-customer`)
			.times(100)
			.reply(async (_uri, body) => {
				const item = itemOf(body);
				const seen = received.get(item) ?? 0;
				received.set(item, seen + 1);
				if (item === 0) {
					if (seen === 0) await sleep(400);
					return [400, { status: 'error', message: 'refused 0' }];
				}
				const status = other(item, seen);
				if (status !== 200) return [status, { status: 'error', message: `refused ${item}` }];
				created.push(item);
				return [200, { status: 'success', response: { id: `cust_${item}`, name: 'Ada' } }];
			});
		return { received, created };
	};
	const runTwoTries = async () =>
		await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 2 } }),
			items: people(40),
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});

	it('lists every item any try created, whether or not the last try reached it', async () => {
		const { created, received } = slowRefusalOfItem0();
		const result = await runTwoTries();
		expect(result.status).toBe('error');
		expect(created.length).toBeGreaterThan(0);
		// Nothing twice.
		for (const item of created) expect(received.get(item)).toBe(1);
		const description = String(result.error?.description);
		const listed = [...description.matchAll(/item (\d+) \(cust_\d+\)/g)].map((m) => Number(m[1]));
		expect(listed).toEqual([...created].sort((a, b) => a - b));
		// What is not listed as created is counted as not sent, and adds up to all 40 items with item 0.
		const notSent = Number(/(\d+) other item\(s\) were not sent/.exec(description)?.[1] ?? 0);
		expect(1 + listed.length + notSent).toBe(40);
	});

	it('lists an item an earlier try may have carried out (no answer), whether or not the last try reached it', async () => {
		const { received } = slowRefusalOfItem0((item) => (item === 1 ? 500 : 200));
		const result = await runTwoTries();
		expect(result.status).toBe('error');
		expect(received.get(1)).toBe(1);
		expect(String(result.error?.description)).toMatch(/Outcome unknown, not sent again: item 1/);
	});
});

const withKey = (run: Omit<InvoiceServiceRun, 'parameters'> & { options?: IDataObject }) => ({
	parameters: customerParameters({
		options: { idempotencyKey: '={{ $json.eventId }}', ...run.options },
	}),
	...run,
});

describe('Idempotency Key: the same event in another execution is not sent again', () => {
	const nodeId = randomUUID();

	it('a repeated key goes to Already Created with its key, and nothing is sent', async () => {
		const { received } = service();
		const first = await runInvoiceService(withKey({ items: people(3), nodeId }));
		expect(first.outputs).toHaveLength(2);
		expect(idsOf(first.outputs[0])).toEqual(['cust_0_1', 'cust_1_1', 'cust_2_1']);
		expect(first.outputs[1]).toEqual([]);

		const second = await runInvoiceService(withKey({ items: people(4), nodeId }));
		expect(idsOf(second.outputs[0])).toEqual(['cust_3_1']);
		expect(second.outputs[0][0].pairedItem).toEqual({ item: 3 });
		expect(second.outputs[1].map((item) => [item.json.idempotencyKey, item.pairedItem])).toEqual([
			['event-0', { item: 0 }],
			['event-1', { item: 1 }],
			['event-2', { item: 2 }],
		]);
		expect(second.outputs[1][0].json.alreadyCreated).toBe(true);
		expect([...received.values()]).toEqual([1, 1, 1, 1]);
		expect(hintsOf(second)).toMatch(
			/3 item\(s\) were already created through this node in an earlier execution/,
		);
	});

	it('a create refused for sure gives the key back: the re-delivery creates it (one, never none)', async () => {
		const { created } = service((_item, seen) => (seen === 0 ? 400 : 200));
		const first = await runInvoiceService(
			withKey({ items: people(1), nodeId, onError: 'continueRegularOutput' }),
		);
		expect(first.outputs[0][0].json.error).toBeDefined();
		const second = await runInvoiceService(withKey({ items: people(1), nodeId }));
		expect(idsOf(second.outputs[0])).toEqual(['cust_0_1']);
		expect(created.get(0)).toBe(1);
	});

	it('a create with an unknown outcome marks its key unknown: the re-delivery fails, naming it, and is not sent', async () => {
		const { received } = service((_item, seen) => (seen === 0 ? 500 : 200));
		await runInvoiceService(
			withKey({ items: people(1), nodeId, onError: 'continueRegularOutput' }),
		);
		const second = await runInvoiceService(withKey({ items: people(1), nodeId }));
		expect(second.status).toBe('error');
		expect(second.error?.message).toMatch(/Idempotency Key "event-0" is unknown/);
		expect(received.get(0)).toBe(1);
	});

	it('Stop while the service holds a keyed create: that key is kept as unknown; a later item is not sent and its key is free', async () => {
		let holding: () => void = () => {};
		const held = new Promise<void>((resolve) => (holding = resolve));
		const { received, created } = service((item) => {
			if (item !== 0) return 200;
			holding();
			return 'hang';
		});
		const stopped = await runInvoiceService(
			withKey({
				items: people(2),
				nodeId,
				onError: 'continueRegularOutput',
				options: { concurrency: 1 },
				cancelWhen: held,
			}),
		);
		expect(stopped.status).toBe('canceled');
		// Item 0 is an unknown outcome with the way forward; item 1 says plainly that nothing was sent.
		const [zero, one] = stopped.outputs[0].map((item) => item.json.error as IDataObject);
		expect(zero.message).toMatch(
			/^The execution was stopped while create-customer waited for the service's answer: outcome unknown$/,
		);
		expect(codesIn(zero.description)).toHaveLength(1);
		expect(one.message).toBe(
			'The execution was stopped before this item was sent: nothing was sent for it.',
		);
		// Item 0 reached the service (which went on to create it); item 1 was never sent.
		expect(received.get(0)).toBe(1);
		expect(received.get(1)).toBeUndefined();
		await sleep(2100);
		expect(created.get(0)).toBe(1);

		// The same events delivered again: item 0's key was kept as unknown (it fails, naming the key, and is not
		// sent), item 1's was released (created now); neither goes to Already Created.
		const again = await runInvoiceService(
			withKey({ items: people(2), nodeId, onError: 'continueRegularOutput' }),
		);
		const [unknown, createdNow] = again.outputs[0];
		expect((unknown.json.error as IDataObject).message).toMatch(
			/Idempotency Key "event-0" is unknown/,
		);
		expect(createdNow.json.id).toBe('cust_1_1');
		expect(again.outputs[1]).toEqual([]);
		expect(received.get(0)).toBe(1);
		expect(created.get(0)).toBe(1);
	});

	it('two executions at once with the same key create once; two items of one run with one key too', async () => {
		const { created } = service();
		const [a, b] = await Promise.all([
			runInvoiceService(withKey({ items: people(1), nodeId })),
			runInvoiceService(withKey({ items: people(1), nodeId })),
		]);
		expect(created.get(0)).toBe(1);
		expect([a.outputs[1].length, b.outputs[1].length].sort()).toEqual([0, 1]);

		const twice = [people(2)[1], people(2)[1]];
		const run = await runInvoiceService(
			withKey({ items: twice, nodeId, options: { concurrency: 2 } }),
		);
		expect(created.get(1)).toBe(1);
		expect(run.outputs[0]).toHaveLength(1);
		expect(run.outputs[1]).toHaveLength(1);
	});

	it('a key that is not text or a number (an object, true) is an item error naming it, and nothing is sent', async () => {
		const { received } = service();
		const items = [
			{ ...people(1)[0], eventId: 'event-0' },
			{ ...people(2)[1], eventId: { id: 1 } },
			{ ...people(3)[2], eventId: true },
		];
		const run = await runInvoiceService(
			withKey({ items, nodeId: randomUUID(), onError: 'continueRegularOutput' }),
		);
		expect(idsOf(run.outputs[0].slice(0, 1))).toEqual(['cust_0_1']);
		const [object, yes] = run.outputs[0].slice(1).map((item) => item.json.error as IDataObject);
		expect(object.message).toBe(
			'Item 1: Idempotency Key must be text or a number: the expression {{ $json.eventId }} gave {"id":1}',
		);
		expect(yes.message).toMatch(/^Item 2: Idempotency Key must be text or a number: .* gave true$/);
		expect(object.description).toMatch(/^Nothing was sent to the service for this item\. Point/);
		expect(received.get(1)).toBeUndefined();
		expect(received.get(2)).toBeUndefined();
	});

	it('claims that arrive together share one write of the store, and each key is still checked', async () => {
		const { created } = service();
		const run = await runInvoiceService(
			withKey({ items: people(10), nodeId, options: { concurrency: 10 } }),
		);
		expect(idsOf(run.outputs[0])).toHaveLength(10);
		expect([...created.values()].every((count) => count === 1)).toBe(true);
		// Fewer writes than claims: the ones that came while a write was under way went together in the next.
		expect(deduplicator.checks).toBeLessThan(10);
		const again = await runInvoiceService(
			withKey({ items: people(10), nodeId, options: { concurrency: 10 } }),
		);
		expect(again.outputs[1]).toHaveLength(10);
		expect(again.outputs[0]).toEqual([]);
	});

	it('History Size: the newest keys are remembered; beyond the room the row keeps for them, the oldest are forgotten', async () => {
		const { created } = service();
		const events = people(50);
		// History Size 2: room for 2 keys' state (2 entries each), for as many keys waited for (17 entries each) and
		// for a check's own entries; a created key holds one entry, so about 40 fit before the oldest go.
		const options = { historySize: 2, concurrency: 1 };
		await runInvoiceService(withKey({ items: events, nodeId, options }));
		const again = await runInvoiceService(
			withKey({ items: [events[0], events[48], events[49]], nodeId, options }),
		);
		expect(idsOf(again.outputs[0])).toEqual(['cust_0_2']);
		expect(again.outputs[1].map((item) => item.json.idempotencyKey)).toEqual([
			'event-48',
			'event-49',
		]);
		expect(created.get(0)).toBe(2);
		expect([...created.values()].filter((count) => count === 1)).toHaveLength(49);
	});

	it('a wrong History Size fails the run even without a key, and a retried execution too (its retry keys are never turned off unseen)', async () => {
		const { received } = service((item, seen) => (item === 1 && seen === 0 ? 400 : 200));
		const wrong = await runInvoiceService({
			parameters: customerParameters({ options: { historySize: 0 } }),
			items: people(2),
			onError: 'continueRegularOutput',
		});
		expect(wrong.outputs[0].map((item) => (item.json.error as IDataObject).message)).toEqual([
			'Item 0: History Size must be a whole number of at least 1, got 0',
			'Item 0: History Size must be a whole number of at least 1, got 0',
		]);
		expect(received.size).toBe(0);

		const first = await runInvoiceService({
			parameters: customerParameters({ options: { concurrency: 1 } }),
			items: people(2),
		});
		expect(first.status).toBe('error');
		const retried = await first.retry({
			currentParameters: customerParameters({ options: { concurrency: 1, historySize: 'many' } }),
		});
		expect(retried.status).toBe('error');
		expect(retried.error?.message).toBe(
			'Item 0: History Size must be a whole number of at least 1, got "many"',
		);
		expect([received.get(0), received.get(1)]).toEqual([1, 1]);
	});

	it('without a key the node has one output and asks nothing of the store', async () => {
		service();
		const run = await runInvoiceService({ parameters: customerParameters(), items: people(2) });
		expect(run.outputs).toHaveLength(1);
		expect(deduplicator.checks).toBe(0);
	});
});

describe('Idempotency Key that gives nothing: the item fails, the check is never turned off unseen', () => {
	const BLANK = 'Item 1: Idempotency Key is blank: the expression {{ $json.eventId }} gave nothing';
	/** Three events, the second without an eventId (as after a Webhook trigger, where it is under body). */
	const secondWithout = () =>
		people(3).map((person, index): IDataObject => {
			if (index !== 1) return person;
			const rest: IDataObject = { ...person };
			delete rest.eventId;
			return rest;
		});

	it('Continue (error output): the blank item leaves by the error output, says why and what to do, and is not sent', async () => {
		const { received } = service();
		const run = await runInvoiceService(
			withKey({ items: secondWithout(), nodeId: randomUUID(), onError: 'continueErrorOutput' }),
		);
		// Outputs: Created, Already Created, error output.
		expect(idsOf(run.outputs[0])).toEqual(['cust_0_1', 'cust_2_1']);
		expect(run.outputs[1]).toEqual([]);
		expect(run.outputs[2]).toHaveLength(1);
		const error = run.outputs[2][0].json.error as IDataObject;
		expect(error.message).toBe(BLANK);
		expect(error.description).toBe(
			'Nothing was sent to the service for this item. After a Webhook trigger the event is under body, e.g. {{ $json.body.eventId }}. A blank key would turn the duplicate check off, so the item fails instead. Point the key at a field every event has (the input pane shows the fields), or remove the Idempotency Key option to send without the check.',
		);
		expect(run.outputs[2][0].pairedItem).toEqual({ item: 1 });
		expect(received.get(1)).toBeUndefined();
		expect([...received.keys()].sort()).toEqual([0, 2]);
	});

	it('Stop: the execution fails with that message, and the blank item is not sent', async () => {
		const { received } = service();
		const run = await runInvoiceService(
			withKey({ items: secondWithout(), nodeId: randomUUID(), options: { concurrency: 1 } }),
		);
		expect(run.status).toBe('error');
		expect(run.error?.message).toBe(BLANK);
		expect(received.get(1)).toBeUndefined();
	});

	it('the same event delivered twice with a blank key: never two records unseen (each delivery fails)', async () => {
		const { created } = service();
		const nodeId = randomUUID();
		const delivery = () =>
			runInvoiceService(
				withKey({ items: [secondWithout()[1]], nodeId, onError: 'continueRegularOutput' }),
			);
		const [first, second] = [await delivery(), await delivery()];
		for (const run of [first, second]) {
			expect((run.outputs[0][0].json.error as IDataObject).message).toMatch(
				/^Item 0: Idempotency Key is blank: /,
			);
		}
		expect(created.size).toBe(0);
	});

	it.each([
		['spaces', '  ', '"  " (blank)'],
		['null', null, 'null'],
		['invisible text', '\u200b', '"\u200b" (blank)'],
		['the text of a missing value', 'undefined', '"undefined" (blank)'],
	])('%s is blank too', async (_name, eventId, shown) => {
		const { received } = service();
		const items = [{ ...people(1)[0], eventId }];
		const run = await runInvoiceService(
			withKey({ items, nodeId: randomUUID(), onError: 'continueRegularOutput' }),
		);
		expect((run.outputs[0][0].json.error as IDataObject).message).toBe(
			`Item 0: Idempotency Key is blank: the expression {{ $json.eventId }} gave ${shown}`,
		);
		expect(received.size).toBe(0);
	});

	it('a key over body that is missing says to check the field, and quotes a long expression cut short', async () => {
		const { received } = service();
		const long = `={{ $json.body.eventId ?? $json.body.${'x'.repeat(80)} }}`;
		const run = await runInvoiceService({
			parameters: customerParameters({ options: { idempotencyKey: '={{ $json.body.eventId }}' } }),
			items: people(1),
			nodeId: randomUUID(),
			onError: 'continueRegularOutput',
		});
		expect((run.outputs[0][0].json.error as IDataObject).message).toBe(
			'Item 0: Idempotency Key is blank: the expression {{ $json.body.eventId }} gave nothing',
		);
		expect((run.outputs[0][0].json.error as IDataObject).description).toMatch(
			/^Nothing was sent to the service for this item\. Check the field's name in the input pane: this item has no value there\. /,
		);
		const cut = await runInvoiceService({
			parameters: customerParameters({ options: { idempotencyKey: long } }),
			items: people(1),
			nodeId: randomUUID(),
			onError: 'continueRegularOutput',
		});
		const message = String((cut.outputs[0][0].json.error as IDataObject).message);
		expect(message).toContain(`the expression ${long.slice(1, 78)}... gave`);
		expect(received.size).toBe(0);
	});

	it('the option added and left empty (or an empty expression): every item fails, nothing is sent', async () => {
		const { received } = service();
		for (const [idempotencyKey, said] of [
			['', 'the field is empty'],
			['=', 'the expression is empty'],
		]) {
			const run = await runInvoiceService({
				parameters: customerParameters({ options: { idempotencyKey } }),
				items: people(2),
				nodeId: randomUUID(),
				onError: 'continueErrorOutput',
			});
			// One output (no key is set to check against) and the error output.
			expect(run.outputs[0]).toEqual([]);
			expect(run.outputs[1].map((item) => (item.json.error as IDataObject).message)).toEqual(
				[0, 1].map((item) => `Item ${item}: Idempotency Key is blank: ${said}`),
			);
		}
		expect(received.size).toBe(0);
	});

	it('a key that is there still works: a number key, and the Webhook form of the key', async () => {
		const { received } = service();
		const nodeId = randomUUID();
		const items = [{ ...people(1)[0], eventId: 7 }];
		const first = await runInvoiceService(withKey({ items, nodeId }));
		const second = await runInvoiceService(withKey({ items, nodeId }));
		expect(idsOf(first.outputs[0])).toEqual(['cust_0_1']);
		expect(second.outputs[1].map((item) => item.json.idempotencyKey)).toEqual(['7']);
		const webhook = {
			parameters: customerParameters({
				firstName: '={{ $json.body.first }}',
				lastName: '={{ $json.body.last }}',
				email: '={{ $json.body.email }}',
				options: { idempotencyKey: '={{ $json.body.eventId }}' },
			}),
			items: [{ headers: {}, query: {}, body: people(2)[1] }],
			nodeId,
		};
		const [a, b] = [await runInvoiceService(webhook), await runInvoiceService(webhook)];
		expect(idsOf(a.outputs[0])).toEqual(['cust_1_1']);
		expect(b.outputs[1].map((item) => item.json.idempotencyKey)).toEqual(['event-1']);
		expect([...received.values()]).toEqual([1, 1]);
	});
});

describe('Idempotency Key in the AI tool variant', () => {
	it('a repeated key answers the model that it was already created, with its key, and sends nothing', async () => {
		const { received } = service();
		const nodeId = randomUUID();
		const first = await runInvoiceService(withKey({ items: people(1), nodeId, asTool: true }));
		expect(first.outputs[0].map((item) => item.json)).toEqual([{ id: 'cust_0_1', name: 'Ada' }]);
		const second = await runInvoiceService(withKey({ items: people(1), nodeId, asTool: true }));
		expect(second.outputs[0].map((item) => item.json)).toEqual([
			{
				idempotencyKey: 'event-0',
				alreadyCreated: true,
				message: expect.stringMatching(/not sent again/),
			},
		]);
		expect(received.get(0)).toBe(1);
	});
});
