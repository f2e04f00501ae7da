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
			resendUnknown: defaultOf('resendUnknown'),
		});
		expect(readRunOptions({})).toEqual({
			concurrency: 5,
			timeoutMs: 60000,
			maxRetryWaitMs: 120000,
			resendUnknown: false,
		});
	});

	it('uses the values given, in the units the transport needs', () => {
		expect(
			readRunOptions({ concurrency: 12, timeout: 3000, maxRetryWait: 0, resendUnknown: true }),
		).toEqual({
			concurrency: 12,
			timeoutMs: 3000,
			maxRetryWaitMs: 0,
			resendUnknown: true,
		});
	});

	it('refuses a Resend Unknown Outcomes that is not true or false, naming it', () => {
		expect(() => readRunOptions({ resendUnknown: 'maybe' })).toThrow(
			'Resend Unknown Outcomes must be true or false',
		);
	});

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
