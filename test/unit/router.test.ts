import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { readRunOptions, runOptions } from '../../nodes/InvoiceService/actions/common.descriptions';
import { resources } from '../../nodes/InvoiceService/actions/resources';
import { withToolDefaults } from '../../nodes/InvoiceService/actions/tool';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';

const { properties } = new InvoiceService().description;

function optionValues(property: INodeProperties | undefined): string[] {
	return ((property?.options ?? []) as INodePropertyOptions[]).map((option) =>
		String(option.value),
	);
}

describe("the router's operation table", () => {
	const resourceValues = optionValues(properties.find((property) => property.name === 'resource'));

	it('has a resource for every resource the editor offers, and no other', () => {
		expect(resourceValues.length).toBeGreaterThan(0);
		expect(Object.keys(resources).sort()).toEqual([...resourceValues].sort());
	});

	it.each(resourceValues)(
		'runs exactly the operations the editor offers for %s, each with its own fields',
		(resource) => {
			const operationProperty = properties.find(
				(property) =>
					property.name === 'operation' &&
					property.displayOptions?.show?.resource?.includes(resource),
			);
			const offered = optionValues(operationProperty);
			expect(offered.length).toBeGreaterThan(0);
			expect(Object.keys(resources[resource].operations).sort()).toEqual([...offered].sort());
			for (const operation of offered) {
				const fields = resources[resource].operations[operation].description;
				expect(fields.length).toBeGreaterThan(0);
				for (const field of fields) {
					expect(field.displayOptions?.show).toMatchObject({
						resource: [resource],
						operation: [operation],
					});
					// The node shows it as is, or (tool variant) as the twins withToolDefaults makes of it.
					for (const shown of withToolDefaults([field])) expect(properties).toContainEqual(shown);
				}
			}
		},
	);
});

describe('readRunOptions', () => {
	const defaultOf = (name: string) => runOptions.find((option) => option.name === name)?.default;

	it("takes each option's declared default when it was not added", () => {
		expect(readRunOptions({})).toEqual({
			concurrency: defaultOf('concurrency'),
			timeoutMs: defaultOf('timeout'),
			maxRetryWaitMs: Number(defaultOf('maxRetryWait')) * 1000,
			resendCodes: [],
		});
		expect(defaultOf('resendUnknownOf')).toBe('');
		expect(readRunOptions({})).toEqual({
			concurrency: 5,
			timeoutMs: 60000,
			maxRetryWaitMs: 120000,
			resendCodes: [],
		});
	});

	it('uses the values given, in the units the transport needs', () => {
		expect(
			readRunOptions({
				concurrency: 12,
				timeout: 3000,
				maxRetryWait: 0,
				resendUnknownOf: ' k7qm2xr9, 23456789 ,K7QM2XR9;ABCDEFGH ',
			}),
		).toEqual({
			concurrency: 12,
			timeoutMs: 3000,
			maxRetryWaitMs: 0,
			// Upper case, each once; commas, semicolons or spaces between.
			resendCodes: ['K7QM2XR9', '23456789', 'ABCDEFGH'],
		});
	});

	it.each(['true', 'K7QM2XR', 'K7QM2XR9X', 'K7QM-2XR9', 'K7QM2XR0', 'K7QM2XR9, yes'])(
		'refuses a Resend Unknown Outcomes Of of %p that is not resend codes, naming it',
		(given) => {
			expect(() => readRunOptions({ resendUnknownOf: given })).toThrow(
				/^Resend Unknown Outcomes Of must list resend codes, got /,
			);
		},
	);

	it.each([true, 12345678])(
		'refuses a Resend Unknown Outcomes Of that is not text (%p)',
		(given) => {
			expect(() => readRunOptions({ resendUnknownOf: given })).toThrow(
				/^Resend Unknown Outcomes Of must list resend codes/,
			);
		},
	);

	it.each([0, -3, 2.7, 51, 'abc'])(
		'refuses concurrency %p before anything is sent, instead of clamping it',
		(given) => {
			expect(() => readRunOptions({ concurrency: given })).toThrow(
				`Concurrency must be a whole number from 1 to 50, got ${JSON.stringify(given)}`,
			);
		},
	);

	it('keeps a fractional wait or time-out from an expression', () => {
		expect(readRunOptions({ timeout: 1500.5, maxRetryWait: 1.5 })).toMatchObject({
			timeoutMs: 1500.5,
			maxRetryWaitMs: 1500,
		});
	});
});
