// The results chart: grouped bars drawn as plain SVG by the bench itself (no library, no service).
// Two panels share the groups (scenarios) and the series (nodes); a missing value leaves a gap.

export interface ChartGroup {
	label: string;
	/** One value per series, in series order; undefined where that node did not run in this group. */
	values: Array<number | undefined>;
}

export interface ChartPanel {
	title: string;
	unit: string;
	groups: ChartGroup[];
	digits: number;
}

export interface ChartSeries {
	name: string;
	color: string;
}

const WIDTH = 960;
const PANEL_HEIGHT = 300;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 50 };

function escapeXml(text: string): string {
	return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A round axis maximum (1, 2 or 5 × a power of ten) at or above the largest value. */
function niceMax(value: number): number {
	if (!(value > 0)) return 1;
	const power = 10 ** Math.floor(Math.log10(value));
	return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

function panelSvg(panel: ChartPanel, series: ChartSeries[], top: number): string[] {
	const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
	const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
	const plotTop = top + MARGIN.top;
	const values = panel.groups.flatMap((g) => g.values).filter((v): v is number => v !== undefined);
	const max = niceMax(Math.max(0, ...values));
	const y = (v: number) => plotTop + plotHeight - (v / max) * plotHeight;
	const out: string[] = [
		`<text x="${MARGIN.left}" y="${top + 24}" font-size="15" font-weight="bold">${escapeXml(panel.title)}</text>`,
	];
	for (let i = 0; i <= 4; i++) {
		const v = (max * i) / 4;
		out.push(
			`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
			`<text x="${MARGIN.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${+v.toPrecision(3)}</text>`,
		);
	}
	out.push(
		`<text x="14" y="${plotTop + plotHeight / 2}" font-size="12" transform="rotate(-90 14 ${plotTop + plotHeight / 2})" text-anchor="middle">${escapeXml(panel.unit)}</text>`,
	);
	const groupWidth = plotWidth / panel.groups.length;
	const barWidth = (groupWidth * 0.8) / series.length;
	panel.groups.forEach((group, g) => {
		const groupLeft = MARGIN.left + g * groupWidth + groupWidth * 0.1;
		group.values.forEach((value, s) => {
			if (value === undefined || !Number.isFinite(value)) return;
			const x = groupLeft + s * barWidth;
			out.push(
				`<rect x="${x.toFixed(1)}" y="${y(value).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(plotTop + plotHeight - y(value)).toFixed(1)}" fill="${series[s].color}"/>`,
				`<text x="${(x + barWidth / 2 - 1).toFixed(1)}" y="${(y(value) - 4).toFixed(1)}" font-size="10" text-anchor="middle">${value.toFixed(panel.digits)}</text>`,
			);
		});
		out.push(
			`<text x="${(MARGIN.left + (g + 0.5) * groupWidth).toFixed(1)}" y="${plotTop + plotHeight + 18}" font-size="12" text-anchor="middle">${escapeXml(group.label)}</text>`,
		);
	});
	out.push(
		`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${plotTop + plotHeight}" y2="${plotTop + plotHeight}" stroke="#333"/>`,
	);
	return out;
}

export function renderChart(panels: ChartPanel[], series: ChartSeries[], caption: string): string {
	const legendHeight = 30;
	const height = panels.length * PANEL_HEIGHT + legendHeight + 20;
	const parts: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
		`<rect width="100%" height="100%" fill="white"/>`,
	];
	series.forEach((s, i) => {
		const x = MARGIN.left + i * 190;
		parts.push(
			`<rect x="${x}" y="10" width="14" height="14" fill="${s.color}"/>`,
			`<text x="${x + 20}" y="22" font-size="13">${escapeXml(s.name)}</text>`,
		);
	});
	panels.forEach((panel, i) =>
		parts.push(...panelSvg(panel, series, legendHeight + i * PANEL_HEIGHT)),
	);
	parts.push(
		`<text x="${MARGIN.left}" y="${height - 8}" font-size="11" fill="#555">${escapeXml(caption)}</text>`,
		'</svg>',
	);
	return `${parts.join('\n')}\n`;
}
