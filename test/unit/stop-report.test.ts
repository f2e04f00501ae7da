// The stop report (runReport.ts, withStopReport): n8n keeps one thrown error a run, so every resend code the run
// made must be in it, however many items have one (issue 51, defect 2).
import { NodeOperationError, type INode } from 'n8n-workflow';

import { RunRecord } from '../../nodes/InvoiceService/exactlyOnce/runRecord';
import {
	noCounts,
	withStopReport,
	type Failed,
} from '../../nodes/InvoiceService/exactlyOnce/runReport';

const node = { name: 'Invoice Service', type: 'n8n-nodes-invoice-service.invoiceService' } as INode;
const context = { getExecuteData: () => ({}) } as never;

const gaveUp = (itemIndex: number): Failed => ({
	itemIndex,
	code: `CODE${String(itemIndex).padStart(4, '0')}`,
	error: new NodeOperationError(node, `Item ${itemIndex}: outcome unknown`, {
		itemIndex,
		description: `Enter CODE${String(itemIndex).padStart(4, '0')}`,
	}),
});

describe('a run that stops with items whose keys it gave up waiting for', () => {
	it.each([2, 120])(
		'its thrown error lists the resend code of each of %i items, not only its own',
		(count) => {
			const notResent = Array.from({ length: count }, (_, index) => gaveUp(count - 1 - index));
			const error = withStopReport({
				failures: [],
				notResent,
				record: RunRecord.of(context, { toolCall: false }),
				handled: new Set(notResent.map(({ itemIndex }) => itemIndex)),
				count,
				counts: { ...noCounts(), notResent: count },
			});
			expect(error.message).toBe('Item 0: outcome unknown');
			for (let index = 0; index < count; index++) {
				const code = `CODE${String(index).padStart(4, '0')}`;
				expect(`${error.message} ${error.description}`).toContain(`item ${index} (code ${code})`);
			}
		},
	);

	it('a code the record already lists is not listed twice', () => {
		const record = RunRecord.of(context, { toolCall: false });
		record.unknown(1, { message: 'no answer' }, 'RECORDED');
		const error = withStopReport({
			failures: [],
			notResent: [gaveUp(0), { ...gaveUp(1), code: undefined }],
			record,
			handled: new Set([0, 1]),
			count: 2,
			counts: { ...noCounts(), notResent: 2 },
		});
		const description = String(error.description);
		expect(description).toContain('item 0 (code CODE0000), item 1 (code RECORDED)');
		expect(description.match(/RECORDED/g)).toHaveLength(1);
	});

	it("an item's newer code, given by this run, replaces the record's used one, there and in the record", () => {
		const record = RunRecord.of(context, { toolCall: false });
		record.unknown(0, { message: 'no answer', description: 'Enter OLDCODE1 …' }, 'OLDCODE1');
		record.unknown(1, { message: 'no answer', description: 'Enter OLDCODE2 …' }, 'OLDCODE2');
		const error = withStopReport({
			failures: [],
			notResent: [{ ...gaveUp(0), code: 'NEWCODE1' }],
			record,
			handled: new Set([0]),
			count: 2,
			counts: { ...noCounts(), notResent: 1 },
		});
		expect(String(error.description)).toContain('item 0 (code NEWCODE1)');
		expect(String(error.description)).not.toContain('OLDCODE1');
		// An item never reached whose key the run gave a new code (runClaims' expiredUnsent): the record says it.
		record.recode(1, 'NEWCODE2');
		expect(record.entries()).toContainEqual([
			1,
			{ unknown: { message: 'no answer', description: 'Enter NEWCODE2 …' }, code: 'NEWCODE2' },
		]);
	});
});
