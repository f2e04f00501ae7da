// What the storm report files share: the medians and figures of a group of runs, and the report they write into.
import { fmt } from '../measure';
import { median } from '../report';
import type { StormMeasured } from './measure';
import { STORM_RATE } from './plan';

export type Runs = StormMeasured[];

/** A bar group of the chart: a label and one value per series. */
export interface ChartGroup {
	label: string;
	values: Array<number | undefined>;
}

/** What a storm's renderer writes into: the report's lines and the chart's two panels, and the runs to read. */
export interface StormSection {
	runs(group: string, kind?: string, events?: number): Runs;
	lines: string[];
	panels: { cpu: ChartGroup[]; time: ChartGroup[] };
}

export const med = (runs: Runs, value: (m: StormMeasured) => number) => median(runs.map(value));
export const sec = (ms: number) => fmt(ms / 1000, 1);
export const pct = (part: number, whole: number) => `${fmt((part / whole) * 100, 1)} %`;
export const loads = (runs: Runs) =>
	runs.map((m) => `${fmt(m.load[0], 1)}→${fmt(m.load[1], 1)}`).join(', ');
/** Every run created every event's customer and invoice exactly once. */
export const allOnce = (runs: Runs) =>
	runs.every((m) => m.exactlyOnce === m.spec.events && m.duplicates === 0);
export const share429 = (m: StormMeasured) => m.rateLimited / m.createRequests;
/** The rate limit's bound: the creates needed (2 per event) ÷ the rate. */
export const rateBoundS = (events: number) => (2 * events) / STORM_RATE.perSecond;
/** Events with an invoice per second, from the first event sent to the last invoice. */
export const throughput = (m: StormMeasured) => (m.spec.events - m.lost) / (m.lastInvoiceMs / 1000);
/** CPU busy of a process over the storm (first event sent → last answer), in cores. */
export const busy = (m: StormMeasured, name: string) => m.cpuS[name] / (m.wallMs / 1000);

export function outcome(runs: Runs): string[] {
	return [
		`${med(runs, (m) => m.exactlyOnce)} / ${runs[0].spec.events}`,
		String(Math.max(...runs.map((m) => m.duplicates))),
		runs.map((m) => m.lost).join(', '),
	];
}
