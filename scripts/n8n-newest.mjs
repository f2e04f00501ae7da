#!/usr/bin/env node
// `npm run n8n:newest`: the newest n8n 2.x and 1.x that install cleanly from the registry here, beside the
// versions the tests use (tools/n8n/versions.json), and whether those are behind.
//
// "Installs cleanly" means the version's whole dependency tree resolves with the project's own install recipe
// (`scripts/install-n8n.sh --resolves`, npm's --package-lock-only: nothing is downloaded but metadata). The
// registry's `latest` may not: 2.41.3 needs @n8n/agents@0.26.2, which the registry does not have (ETARGET).
// Such a version is reported with npm's reason and skipped, never forced with an override.
//
//   node scripts/n8n-newest.mjs [--tries N]   N: stable versions tried per major, newest first (default 4)
//
// Exit 0 when the tested versions are the newest that install, 1 when one is behind (a one-line change of
// tools/n8n/versions.json moves it), 2 when the registry could not be asked.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tested = JSON.parse(
	fs.readFileSync(path.join(root, 'tools/n8n/versions.json'), 'utf8'),
).tested;
const triesArg = process.argv.indexOf('--tries');
const tries = triesArg > 0 ? Number(process.argv[triesArg + 1]) : 4;

/** Compares x.y.z versions numerically (stable versions only reach here). */
const compare = (a, b) => {
	const [x, y] = [a, b].map((v) => v.split('.').map(Number));
	return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};

let registry;
try {
	registry = JSON.parse(
		execFileSync('npm', ['view', 'n8n', 'versions', 'dist-tags', '--json'], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'pipe'],
		}),
	);
} catch (error) {
	console.error(`n8n-newest: the registry did not answer \`npm view n8n\`: ${error.message}`);
	process.exit(2);
}
const stable = registry.versions
	.filter((v) => /^\d+\.\d+\.\d+$/.test(v))
	.sort(compare)
	.reverse();
console.log(
	`registry dist-tags: ${Object.entries(registry['dist-tags'])
		.map(([t, v]) => `${t} ${v}`)
		.join(', ')}`,
);

const rows = [];
let behind = false;
for (const major of ['2', '1']) {
	const mine = tested.find((v) => v.startsWith(`${major}.`));
	let newest;
	for (const version of stable.filter((v) => v.startsWith(`${major}.`)).slice(0, tries)) {
		const started = Date.now();
		const r = spawnSync(
			'bash',
			[path.join(root, 'scripts/install-n8n.sh'), '--resolves', version],
			{
				encoding: 'utf8',
			},
		);
		const verdict = (r.stdout.trim().split('\n').pop() || r.stderr.trim()).trim();
		console.log(`  ${version}: ${verdict} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
		if (r.status === 0) {
			newest = version;
			break;
		}
	}
	const status =
		newest === undefined
			? `none of the newest ${tries} resolves`
			: mine === undefined
				? 'not tested'
				: compare(newest, mine) > 0
					? 'behind'
					: 'newest';
	if (status === 'behind') behind = true;
	rows.push([`${major}.x`, newest ?? '-', mine ?? '-', status]);
}

const header = ['major', 'newest that installs', 'tested', 'tests are'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(
	['', line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'),
);
if (behind) {
	console.log(
		'\nTo move: put the newer version in tools/n8n/versions.json, `npm run n8n:install`, `npm test`, and update the table of first-run times in docs/development.md.',
	);
}
process.exit(behind ? 1 : 0);
