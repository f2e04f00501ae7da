// Timeout as a total deadline and the PDF size limit (issue 9), against the sandbox's trickle, oversized and
// endless faults over real loopback sockets: a trickled answer is cut at Timeout with its socket closed (the
// sandbox counts the aborted response and no open connection), a create cut that way is never sent again, and
// an oversized or endless PDF is refused at Max PDF Size while the node's memory stays far below the file.
// The figures printed (time to abort, peak memory growth) are the ones in docs/reference.md; they are not asserted
// tightly, only against bounds no working node comes near.
import { sleep } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../../sandbox/server';
import { customers, itemError, OUTCOME_UNKNOWN, runAgainst } from './helpers';
import { customerParameters, invoiceParameters } from '../support/invoice-service';

jest.setTimeout(180_000);

const MB = 1024 * 1024;
const TIMEOUT_MS = 3000;

/** Waits until the sandbox has no socket open (every aborted exchange really closed). */
async function noOpenConnections(sandbox: Sandbox): Promise<number> {
	for (let waited = 0; waited < 5000 && sandbox.stats().openConnections > 0; waited += 50) {
		await sleep(50);
	}
	return sandbox.stats().openConnections;
}

/** Runs `work` while sampling this process's resident memory; returns the peak growth over the start. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
	const start = process.memoryUsage().rss;
	let peak = start;
	let running = true;
	const sampler = (async () => {
		while (running) {
			peak = Math.max(peak, process.memoryUsage().rss);
			await sleep(5);
		}
	})();
	try {
		const result = await work();
		return { result, growthMb: (peak - start) / MB };
	} finally {
		running = false;
		await sampler;
	}
}

describe('Timeout and PDF size against the sandbox faults', () => {
	let sandbox: Sandbox;
	let customerId: string;

	beforeAll(async () => {
		sandbox = await startSandbox({ trickleMs: 60_000, seed: 11 });
		const created = await runAgainst(
			sandbox.rootUrl,
			sandbox.apiKey,
			customerParameters(),
			customers(1, 'pdf'),
		);
		customerId = String(created.outputs[0][0].json.id);
	});
	afterAll(async () => {
		await sandbox.close();
	});
	afterEach(() => sandbox.configure({ faults: { trickle: 0 }, pdfFault: null }));

	it('a trickled create is cut at Timeout, reported as outcome unknown, never sent again, socket closed', async () => {
		sandbox.configure({ faults: { trickle: 1 } });
		const before = sandbox.stats();
		const inputs = customers(3, 'trickle');
		const started = Date.now();
		const result = await runAgainst(
			sandbox.rootUrl,
			sandbox.apiKey,
			customerParameters({ options: { timeout: TIMEOUT_MS, concurrency: 3 } }),
			inputs,
			'continueErrorOutput',
		);
		const tookMs = Date.now() - started;
		console.log(
			`trickled create (trickle over 60 s), Timeout ${TIMEOUT_MS} ms, 3 items at once: run ended after ${tookMs} ms`,
		);

		expect(result.outputs[0]).toHaveLength(0);
		expect(result.outputs[1]).toHaveLength(3);
		for (const item of result.outputs[1]) {
			expect(itemError(item)?.message).toMatch(OUTCOME_UNKNOWN);
			expect(itemError(item)?.message).toMatch(
				/^No answer from create-customer within the time-out/,
			);
		}
		expect(await noOpenConnections(sandbox)).toBe(0);
		const after = sandbox.stats();
		// The service did act (the records exist): exactly why the node must not send them again.
		expect(after.customers - before.customers).toBe(3);
		expect(after.requests.total - before.requests.total).toBe(3);
		expect(after.faults.trickle - before.faults.trickle).toBe(3);
		expect(after.abortedResponses - before.abortedResponses).toBe(3);
		expect(tookMs).toBeLessThan(30_000);
	});

	it('a trickled PDF is cut at Timeout: the invoice was created, its PDF not downloaded, socket closed', async () => {
		sandbox.configure({ pdfFault: 'trickle' });
		const before = sandbox.stats();
		const started = Date.now();
		const result = await runAgainst(
			sandbox.rootUrl,
			sandbox.apiKey,
			invoiceParameters({ customerId, options: { downloadPdf: true, timeout: TIMEOUT_MS } }),
			[{ description: 'Trickled PDF' }],
			'continueErrorOutput',
		);
		const tookMs = Date.now() - started;
		console.log(
			`trickled PDF (over 60 s), Timeout ${TIMEOUT_MS} ms: item failed after ${tookMs} ms`,
		);

		const error = itemError(result.outputs[1][0]);
		expect(error?.message).toMatch(
			/^Invoice inv_\d+ was created, but its PDF could not be downloaded: the download did not finish within the time-out \(3 s\)$/,
		);
		expect(await noOpenConnections(sandbox)).toBe(0);
		const after = sandbox.stats();
		expect(after.invoices - before.invoices).toBe(1);
		expect(after.pdfFaults.trickle - before.pdfFaults.trickle).toBe(1);
		expect(after.abortedResponses - before.abortedResponses).toBe(1);
		expect(tookMs).toBeLessThan(30_000);
	});

	it.each([
		['oversized (Content-Length 256 MB)', 'oversized' as const, / \(it announced 256 MB\)$/],
		['endless (no Content-Length)', 'endless' as const, /limit of 50 MB$/],
	])(
		'an %s PDF is refused at the default 50 MB limit with bounded memory',
		async (name, fault, ending) => {
			sandbox.configure({ pdfFault: fault, pdfOversizeBytes: 256 * MB });
			const before = sandbox.stats();
			const { result, growthMb } = await peakRssGrowth(
				async () =>
					await runAgainst(
						sandbox.rootUrl,
						sandbox.apiKey,
						invoiceParameters({ customerId, options: { downloadPdf: true } }),
						[{ description: `${name} PDF` }],
						'continueErrorOutput',
					),
			);
			console.log(`${name} PDF, Max PDF Size 50 MB: peak memory growth ${growthMb.toFixed(1)} MB`);

			const error = itemError(result.outputs[1][0]);
			expect(error?.message).toMatch(
				/^Invoice inv_\d+ was created, but its PDF could not be downloaded: the file is larger than the limit of 50 MB/,
			);
			expect(error?.message).toMatch(ending);
			expect(await noOpenConnections(sandbox)).toBe(0);
			const after = sandbox.stats();
			expect(after.pdfFaults[fault] - before.pdfFaults[fault]).toBe(1);
			expect(after.abortedResponses - before.abortedResponses).toBe(1);
			// Never the whole file (256 MB, or endless): the 50 MB limit, the copy made when it is joined, and what the
			// sandbox in this same process holds in its send buffers meanwhile, which grows on a busy machine (measured
			// 147-150 MB on a quiet one, 184 MB beside a full CI run, 230 and 239 MB at its end and beside an n8n install):
			// under the 256 MB of the whole file, which the endless one would pass long before its deadline.
			expect(growthMb).toBeLessThan(256);
		},
	);
});
