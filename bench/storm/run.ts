// `npm run bench -- --storm` (issue 17): webhook storms, one execution per event, in real n8n servers:
// S1 (s1.ts) one n8n with a rate-limited service, S2 (s2.ts) queue mode; the report (report.ts).
// `--quick`: one run each; `--only=s1,s1c,s2,redelivery,redelivery-queue,keycost`: only these (s1c: S1 with n8n's
// production executions capped; the last three: redelivery.ts), no report; `--from=<json>,<json>`: the report from figures saved by earlier runs.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ensureN8nInstalled, packPackage } from '../../tools/n8n';
import { log } from '../measure';
import { STORM_VERSION, stormPlan } from './plan';
import type { StormMeasured } from './measure';
import { writeStormReport } from './report';
import { runKeyCost, runRedelivery, runRedeliveryQueue } from './redelivery';
import { runS1, runS1Capped } from './s1';
import { runS2 } from './s2';

/** The whole storm bench: S1, S2, then results.md's "Storms" section and its chart. */
export async function stormBench(quick: boolean, only: string[], argv: string[]): Promise<void> {
	const plan = stormPlan(quick);
	// --from=a.json,b.json: no runs, the report from the figures earlier runs saved (e.g. `--only=s1` at one
	// time and `--only=s2` at another, each when the machine was quiet).
	const from = argv.find((a) => a.startsWith('--from='))?.slice('--from='.length);
	if (from) {
		const saved = from
			.split(',')
			.flatMap((file) => JSON.parse(fs.readFileSync(file, 'utf8')) as StormMeasured[]);
		await writeStormReport(plan, saved, true);
		return;
	}
	await ensureN8nInstalled([STORM_VERSION]);
	const tarball = await packPackage({ echo: false });
	const wanted = (id: string) => !only.length || only.includes(id);
	const measured = [
		...(wanted('s1') ? await runS1(plan, tarball) : []),
		...(wanted('s1c') ? await runS1Capped(plan, tarball) : []),
		...(wanted('s2') ? await runS2(plan, tarball) : []),
		...(wanted('redelivery') ? await runRedelivery(plan, tarball) : []),
		...(wanted('redelivery-queue') ? await runRedeliveryQueue(plan, tarball) : []),
		...(wanted('keycost') ? await runKeyCost(plan, tarball) : []),
	];
	// Kept for a look at every figure of every run (results.md gives medians), and for --from.
	const rawFile = path.join(os.tmpdir(), `storm-measured-${Date.now()}.json`);
	fs.writeFileSync(rawFile, JSON.stringify(measured, null, 1));
	log(`every run's figures: ${rawFile}`);
	if (only.length) {
		log('--only: no report, bench/results.md left unchanged');
		return;
	}
	await writeStormReport(plan, measured);
}
