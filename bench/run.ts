// `npm run bench` (issues 4 and 10): the Invoice Service node against n8n's HTTP Request node (typeVersion 4.2)
// and against a floor (bench/floor: the same requests with nothing else), in ONE real n8n (one user folder,
// one import of every workflow), against the local sandbox: scenarios P1, P2 and P4 (plan.ts), measured by
// measure.ts, reported by report.ts into bench/results.md with a chart (chart.ts).
// `npm run bench -- --quick` (or BENCH_QUICK=1): small sizes, output in a temp folder.
// `npm run bench -- --only=p2ours10,p2floor10` (or BENCH_ONLY=...): only these scenarios, no report.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as prettier from 'prettier';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	DEFAULT_N8N_VERSION,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	importIntoN8n,
	packPackage,
	removeHome,
	type N8nHome,
} from '../tools/n8n';
import { renderChart } from './chart';
import { installFloor } from './floor/install';
import { fmt, log, measure, type Measured } from './measure';
import { planRuns, readPlan, SANDBOXES, type PlannedRun } from './plan';
import { Report, SERIES } from './report';
import { STORMS_MARKER } from './storm/report';
import { stormBench } from './storm/run';
import { buildWorkflow, credentialsFor } from './workflows';

const VERSION = DEFAULT_N8N_VERSION;
/** The chart's name starts with a dot: `n8n-node build` copies every other *.svg / *.png into dist/. */
const CHART_NAME = '.results-chart.svg';

async function importAll(home: N8nHome, runs: PlannedRun[], sandboxes: Sandbox[]): Promise<void> {
	const { imports, ids } = credentialsFor(sandboxes);
	const workflows = new Map<string, Record<string, unknown>>();
	for (const { scenario } of runs) {
		const credentials = ids[sandboxes.indexOf(scenario.sandbox)];
		workflows.set(scenario.id, buildWorkflow(scenario, credentials));
	}
	await importIntoN8n(home, { credentials: imports, workflows: [...workflows.values()], log });
}

async function main(): Promise<void> {
	const plan = readPlan(process.argv.slice(2), process.env);
	if (process.argv.includes('--storm'))
		return await stormBench(plan.quick, plan.only, process.argv.slice(2));
	log(
		`n8n ${VERSION}${plan.quick ? ' (quick: reduced item counts)' : ''}; load ${os
			.loadavg()
			.map((l) => fmt(l))
			.join(' ')}`,
	);
	await ensureN8nInstalled([VERSION]);
	const tarball = await packPackage({ echo: false });
	log(`package ${path.basename(tarball)}`);

	const sandboxes = {
		P1: await startSandbox(SANDBOXES.P1),
		P2: await startSandbox(SANDBOXES.P2),
		P4: await startSandbox(SANDBOXES.P4),
	};
	const home = await createN8nHome(VERSION, tarball);
	try {
		installFloor(home.nodesDir);
		const runs = planRuns(plan, sandboxes);
		await importAll(home, runs, Object.values(sandboxes));

		const measured: Measured[] = [];
		for (const { scenario, repeat } of runs) {
			if (plan.only.length && !plan.only.includes(scenario.id)) continue;
			measured.push(await measure(home, scenario, repeat));
		}
		if (plan.only.length) {
			log('--only: no report, bench/results.md left unchanged');
			return;
		}

		const outDir = plan.quick
			? fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-bench-quick-'))
			: path.join(REPO_ROOT, 'bench');
		const report = new Report(plan, measured);
		const resultsFile = path.join(outDir, 'results.md');
		// Formatted like every other file of the repository, so that `prettier --check` passes on it.
		const markdown = await prettier.format(report.markdown(VERSION, CHART_NAME), {
			...(await prettier.resolveConfig(path.join(REPO_ROOT, 'bench', 'results.md'))),
			parser: 'markdown',
		});
		const chart = renderChart(
			report.chartPanels(),
			SERIES,
			`npm run bench, n8n ${VERSION}, ${new Date().toISOString().slice(0, 10)}; load averages beside each run in results.md`,
		);
		// The storms' section (npm run bench -- --storm) is another run's: keep it.
		const committed = fs.readFileSync(path.join(REPO_ROOT, 'bench', 'results.md'), 'utf8');
		const storms = committed.includes(STORMS_MARKER)
			? `\n${committed.slice(committed.indexOf(STORMS_MARKER))}`
			: '';
		fs.writeFileSync(resultsFile, markdown + storms);
		fs.writeFileSync(path.join(outDir, CHART_NAME), chart);
		process.stdout.write(markdown);
		log(`wrote ${resultsFile} and ${CHART_NAME}`);
	} finally {
		for (const sandbox of Object.values(sandboxes)) await sandbox.close();
		removeHome(home);
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exitCode = 1;
});
