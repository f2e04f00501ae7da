#!/usr/bin/env node
// Reports, requirement by requirement, how the package stands against n8n's community node verification
// guidelines (https://docs.n8n.io/integrations/creating-nodes/build/reference/verification-guidelines/).
// Each line is `pass` or `open` with what is missing. Items only the project's real repository can fill
// (repository, bugs, homepage, author: scripts/check-publish-ready.mjs) are reported and do not fail; any other
// open item exits 1. The scanner itself (@n8n/scan-community-package on the packed tarball) runs in
// test/release/release.test.ts; whether the node duplicates an existing one is n8n's reviewers' call.
// Usage: node scripts/verify-ready.mjs [package root] [--json]. Plain Node, no dependencies.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const GUIDELINES =
	'https://docs.n8n.io/integrations/creating-nodes/build/reference/verification-guidelines/';
const args = process.argv.slice(2);
const json = args.includes('--json');
const root = resolve(args.find((arg) => !arg.startsWith('--')) ?? '.');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const read = (file) => (existsSync(join(root, file)) ? readFileSync(join(root, file), 'utf8') : '');

/** Every file under `dir` (relative to root) whose name ends in one of `endings`. */
function filesUnder(dir, endings) {
	const start = join(root, dir);
	if (!existsSync(start)) return [];
	return readdirSync(start, { recursive: true })
		.map((name) => join(start, String(name)))
		.filter((file) => endings.some((ending) => file.endsWith(ending)) && statSync(file).isFile());
}

const items = [];
/** One requirement: `problems` empty means pass. `repositoryOnly`: only the real repository can fill it. */
function requirement(title, problems, { passed, repositoryOnly = false } = {}) {
	items.push({
		title,
		status: problems.length === 0 ? 'pass' : 'open',
		detail: problems.length === 0 ? passed : problems.join('; '),
		repositoryOnly,
	});
}

const scripts = pkg.scripts ?? {};
const devDependencies = pkg.devDependencies ?? {};
requirement(
	'Built with the n8n node CLI (n8n-node)',
	[
		!devDependencies['@n8n/node-cli'] && '@n8n/node-cli is not a devDependency',
		!/^n8n-node build\b/.test(scripts.build ?? '') && '`npm run build` is not `n8n-node build`',
		!/\bn8n-node lint\b/.test(scripts.lint ?? '') && '`npm run lint` does not run `n8n-node lint`',
	].filter(Boolean),
	{ passed: `@n8n/node-cli ${devDependencies['@n8n/node-cli']}; build and lint run n8n-node` },
);

const eslintConfig = read('eslint.config.mjs');
requirement(
	"Lint strict: n8n's rules, cloud rules included",
	[
		pkg.n8n?.strict !== true && 'package.json n8n.strict is not true',
		!eslintConfig.includes("'@n8n/node-cli/eslint'") &&
			"eslint.config.mjs does not use n8n-node's config (@n8n/node-cli/eslint)",
		/configWithoutCloudSupport/.test(eslintConfig) &&
			'eslint.config.mjs uses configWithoutCloudSupport (drops the rules verified nodes must pass)',
	].filter(Boolean),
	{ passed: 'n8n.strict is true; eslint.config.mjs is n8n-node config' },
);

requirement(
	"n8n's package scanner is a devDependency",
	devDependencies['@n8n/scan-community-package']
		? []
		: ['@n8n/scan-community-package is not a devDependency'],
	{
		passed: `@n8n/scan-community-package ${devDependencies['@n8n/scan-community-package']} (run on the packed tarball by test/release)`,
	},
);

const runtime = [
	'dependencies',
	'optionalDependencies',
	'bundleDependencies',
	'bundledDependencies',
]
	.flatMap((field) => Object.keys(pkg[field] ?? {}).map((name) => `${field}: ${name}`))
	.concat(
		Object.keys(pkg.peerDependencies ?? {})
			.filter((name) => name !== 'n8n-workflow')
			.map((name) => `peerDependencies: ${name}`),
	);
requirement('No runtime dependencies', runtime, {
	passed: 'no dependencies; peerDependencies only n8n-workflow',
});

const licenseFile = ['LICENSE.md', 'LICENSE', 'LICENSE.txt'].find((file) => read(file));
requirement(
	'License MIT',
	[
		pkg.license !== 'MIT' && `package.json license is ${JSON.stringify(pkg.license)}, not "MIT"`,
		!licenseFile && 'no LICENSE file',
		licenseFile &&
			!/^\s*MIT License/.test(read(licenseFile)) &&
			`${licenseFile} is not the MIT text`,
	].filter(Boolean),
	{ passed: `license "MIT", ${licenseFile} holds the MIT text` },
);

// What the node's code must not touch: environment variables, the file system, other processes.
const FORBIDDEN = [
	[/\bprocess\s*(\.\s*env\b|\[)/, 'process.env'],
	[/(require\s*\(|\bfrom\s+|import\s*\()\s*['"](node:)?fs(\/promises)?['"]/, 'the fs module'],
	[/(require\s*\(|\bfrom\s+|import\s*\()\s*['"](node:)?child_process['"]/, 'child_process'],
	[
		/(require\s*\(|\bfrom\s+|import\s*\()\s*['"](node:)?(os|worker_threads|vm)['"]/,
		'a system module',
	],
];
const shipped = filesUnder('dist', ['.js']);
const nodeCode = [
	...filesUnder('nodes', ['.ts']),
	...filesUnder('credentials', ['.ts']),
	...shipped,
];
const accesses = nodeCode.flatMap((file) =>
	readFileSync(file, 'utf8')
		.split('\n')
		.flatMap((line, index) =>
			FORBIDDEN.filter(([pattern]) => pattern.test(line)).map(
				([, what]) => `${relative(root, file)}:${index + 1} uses ${what}`,
			),
		),
);
requirement('No environment or file-system access in the node', accesses, {
	passed: `${nodeCode.length} files scanned (nodes/, credentials/${shipped.length ? ', dist/' : '; dist/ not built'}): none`,
});

// English: the most common English words make up a good share of any English prose, and almost none of
// another language's. Measured on this README: about 30 %.
const COMMON = new Set(
	'the of and to a in is it that for on with as are be this by or not at from an if its can when which what you your no one all has have was'.split(
		' ',
	),
);
const readme = read('README.md');
const words =
	readme
		.replace(/```[\s\S]*?```/g, ' ')
		.toLowerCase()
		.match(/\p{L}+/gu) ?? [];
const englishShare = words.filter((word) => COMMON.has(word)).length / Math.max(words.length, 1);
const headings = readme.split('\n').filter((line) => /^#{2,3} /.test(line));
const examples = filesUnder('examples', ['.json']);
requirement(
	'README in English, with installation, credentials, usage and example workflows',
	[
		!readme && 'no README.md',
		readme &&
			englishShare < 0.15 &&
			`README.md does not read as English (common English words ${(englishShare * 100).toFixed(0)} % of its words)`,
		...[
			['installation', /install/i],
			['credentials', /credential/i],
			['operations', /operation/i],
		]
			.filter(([, pattern]) => readme && !headings.some((line) => pattern.test(line)))
			.map(([topic]) => `README.md has no section on ${topic}`),
		examples.length === 0 && 'no example workflow in examples/',
	].filter(Boolean),
	{
		passed: `common English words ${(englishShare * 100).toFixed(0)} % of the README's words; sections on installation, credentials, operations; ${examples.length} example workflows`,
	},
);

const workflows = filesUnder('.github/workflows', ['.yml', '.yaml']).map((file) =>
	readFileSync(file, 'utf8'),
);
const publishes = workflows.filter(
	(text) => /id-token:\s*write/.test(text) && /npm (run release|publish)/.test(text),
);
requirement(
	'Published from a GitHub Actions workflow with npm provenance',
	[
		publishes.length === 0 &&
			'no workflow in .github/workflows publishes with `id-token: write` (npm publish or npm run release)',
		pkg.publishConfig?.provenance !== true && 'package.json publishConfig.provenance is not true',
	].filter(Boolean),
	{ passed: 'a workflow publishes with id-token: write; publishConfig.provenance is true' },
);

const here = dirname(fileURLToPath(import.meta.url));
const check = spawnSync(
	process.execPath,
	[join(here, 'check-publish-ready.mjs'), join(root, 'package.json')],
	{ encoding: 'utf8' },
);
requirement(
	'Repository, bugs, homepage and author are the real ones (npm and GitHub must match)',
	check.status === 0
		? []
		: check.stderr
				.split('\n')
				.filter((line) => line.startsWith('  - '))
				.map((line) => line.slice(4).replace(/\. .*$/, '')),
	{ passed: 'set (scripts/check-publish-ready.mjs)', repositoryOnly: true },
);

const open = items.filter((item) => item.status === 'open');
const failing = open.filter((item) => !item.repositoryOnly);
if (json) {
	process.stdout.write(`${JSON.stringify({ guidelines: GUIDELINES, items })}\n`);
} else {
	console.log(`n8n community node verification guidelines (${GUIDELINES}):`);
	for (const item of items) {
		const note =
			item.status === 'open' && item.repositoryOnly
				? ' (only the real repository can fill this)'
				: '';
		console.log(`  ${item.status}  ${item.title}: ${item.detail}${note}`);
	}
	console.log(
		`${items.length - open.length} pass, ${open.length} open` +
			(open.length > failing.length
				? ` (${open.length - failing.length} for the real repository)`
				: ''),
	);
}
process.exit(failing.length > 0 ? 1 : 0);
