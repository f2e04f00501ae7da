// The release path: a publish is refused while package.json holds placeholders, the release tool leaves the
// hand-written CHANGELOG alone, n8n's package scanner finds nothing in the packed tarball, and the
// documentation links of the node and the credential lead to the README sections they describe.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { REPO_ROOT, packPackage } from '../../tools/n8n';
import { headingAnchors } from '../support/docs';

const CHECK = path.join(REPO_ROOT, 'scripts', 'check-publish-ready.mjs');
const packageJson = () =>
	JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Record<
		string,
		unknown
	> & { scripts: Record<string, string> };

let tempRoot: string;
beforeAll(() => {
	tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-service-release-'));
});
afterAll(() => fs.rmSync(tempRoot, { recursive: true, force: true }));

function run(
	command: string,
	args: string[],
	options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
	const env = { ...process.env, ...options.env };
	// jest sets NODE_ENV=test, which changes what eslint-plugin-n8n-nodes-base reports: the tools run as a person
	// or CI runs them.
	delete env.NODE_ENV;
	const result = spawnSync(command, args, {
		cwd: options.cwd ?? REPO_ROOT,
		env,
		encoding: 'utf8',
		timeout: 120_000,
	});
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Writes a package.json variant into its own folder and runs the check on it. */
function checkVariant(name: string, changes: Record<string, unknown>) {
	const dir = fs.mkdtempSync(path.join(tempRoot, `${name}-`));
	const file = path.join(dir, 'package.json');
	fs.writeFileSync(file, JSON.stringify({ ...packageJson(), ...changes }, null, 2));
	return run('node', [CHECK, file]);
}

const REAL_LOOKING = {
	repository: {
		type: 'git',
		url: 'git+https://github.com/acme-billing/n8n-nodes-invoice-service.git',
	},
	bugs: { url: 'https://github.com/acme-billing/n8n-nodes-invoice-service/issues' },
	homepage: 'https://github.com/acme-billing/n8n-nodes-invoice-service#readme',
	author: { name: 'Acme Billing GmbH', email: 'opensource@acme-billing.de' },
};

describe('publishing is refused while package.json holds placeholders', () => {
	test('today: the check fails and lists repository, bugs, homepage and author', () => {
		const result = run('node', [CHECK]);
		expect(result.code).toBe(1);
		expect(result.stderr).toContain('Not ready to publish');
		for (const field of ['repository:', 'bugs:', 'homepage:', 'author.name:', 'author.email:']) {
			expect(result.stderr).toContain(`  - ${field}`);
		}
		expect(result.stderr).toContain('git+https://github.com/OWNER/REPO.git');
	});

	test('with real-looking values the check passes', () => {
		const result = checkVariant('real', REAL_LOOKING);
		expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
		expect(result.stdout).toContain('Ready to publish');
	});

	test.each([
		[
			'the n8n starter template repository',
			{ repository: { type: 'git', url: 'https://github.com/<...>/n8n-nodes-<...>.git' } },
			'repository:',
		],
		[
			'a repository string without a repository path',
			{ repository: 'https://github.com/acme-billing' },
			'repository:',
		],
		['an example.com bugs page', { bugs: 'https://example.com/issues' }, 'bugs:'],
		[
			'the npm page as homepage',
			{ homepage: 'https://www.npmjs.com/package/n8n-nodes-invoice-service' },
			'homepage:',
		],
		[
			'an author string with a .invalid address',
			{ author: 'Ada Lovelace <ada@maintainers.invalid>' },
			'author.email:',
		],
		['an empty author', { author: '' }, 'author.name:'],
	])('%s is refused', (_name, change, field) => {
		const result = checkVariant('placeholder', { ...REAL_LOOKING, ...change });
		expect(result.code).toBe(1);
		expect(result.stderr.split('\n').filter((line) => line.startsWith('  - '))).toEqual([
			expect.stringContaining(field),
		]);
	});

	test('npm run release and npm publish run the check first (prepublishOnly: check, then n8n-node prerelease)', () => {
		const { scripts } = packageJson();
		expect(scripts.release).toBe('node scripts/check-publish-ready.mjs && n8n-node release');
		expect(scripts.prepublishOnly).toBe(
			'node scripts/check-publish-ready.mjs && n8n-node prerelease',
		);
	});

	// .npmrc sets ignore-scripts (for dependency installs), which also skips prepublishOnly: the publish
	// workflow turns scripts back on with NPM_CONFIG_IGNORE_SCRIPTS=false, and publishConfig.provenance makes a
	// publish from a machine outside CI fail anyway.
	test('npm publish as the publish workflow runs it (scripts on) stops at the check', () => {
		const workflow = fs.readFileSync(path.join(REPO_ROOT, '.github/workflows/publish.yml'), 'utf8');
		expect(workflow).toMatch(/NPM_CONFIG_IGNORE_SCRIPTS: 'false'/);
		expect(packageJson().publishConfig).toEqual({ provenance: true });
		const result = run('npm', ['publish', '--dry-run'], {
			env: { RELEASE_MODE: 'true', NPM_CONFIG_IGNORE_SCRIPTS: 'false' },
		});
		expect(result.code).not.toBe(0);
		expect(result.stderr).toContain('Not ready to publish');
		expect(result.stderr).toContain('  - repository:');
	});
});

describe('the release tool keeps the hand-written CHANGELOG', () => {
	test("n8n-node release's after-bump changelog hook leaves CHANGELOG.md unchanged", () => {
		// The hook is read from node-cli itself, so an update that changes it is tested too.
		const releaseJs = fs.readFileSync(
			path.join(REPO_ROOT, 'node_modules/@n8n/node-cli/dist/commands/release.js'),
			'utf8',
		);
		const hook = /--hooks\.after:bump="([^"]+)"/.exec(releaseJs)?.[1];
		expect(hook).toMatch(/auto-changelog/);

		// A git repository like the project's: package.json (with its auto-changelog settings), CHANGELOG.md, a tag.
		const repo = fs.mkdtempSync(path.join(tempRoot, 'changelog-'));
		for (const file of ['package.json', 'CHANGELOG.md']) {
			fs.copyFileSync(path.join(REPO_ROOT, file), path.join(repo, file));
		}
		fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(repo, 'node_modules'));
		const git = (...args: string[]) =>
			run('git', ['-c', 'user.email=release@test', '-c', 'user.name=release test', ...args], {
				cwd: repo,
			});
		git('init', '-q');
		git('add', 'package.json', 'CHANGELOG.md');
		git('commit', '-qm', 'release test');
		git('tag', '0.0.1');
		const before = fs.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8');

		const result = run('bash', ['-c', hook!], { cwd: repo });
		expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 0 });
		expect(fs.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8')).toBe(before);
		// The generated text goes to the terminal instead of the file.
		expect(result.stdout).toContain('auto-changelog');
	});
});

describe("n8n's community package scanner on the packed tarball", () => {
	interface Leg {
		files: string[];
		errors: number;
		warnings: number;
		messages: string[];
	}
	const scan = (tarballDir: string) => {
		const result = run('node', [path.join(__dirname, 'scan-package.mjs'), tarballDir, REPO_ROOT], {
			env: { TMPDIR: tempRoot },
		});
		if (result.code !== 0) throw new Error(`scan failed: ${result.stderr}`);
		return JSON.parse(result.stdout) as { tarball: Leg; source: Leg; verdict: { passed: boolean } };
	};
	let unpacked: string;

	beforeAll(async () => {
		const tarball = await packPackage();
		unpacked = fs.mkdtempSync(path.join(tempRoot, 'package-'));
		const untar = run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
		if (untar.code !== 0) throw new Error(untar.stderr);
	}, 300_000);

	test('the output schemas are in the tarball, where n8n looks for them', () => {
		for (const resource of ['customer', 'invoice']) {
			const file = path.join(
				unpacked,
				`dist/nodes/InvoiceService/__schema__/v1.0.0/${resource}/create.json`,
			);
			expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ type: 'object' });
		}
	});

	test('0 errors and 0 warnings, on the tarball and on the published sources', () => {
		const report = scan(unpacked);
		expect(report.tarball.files).toEqual(
			expect.arrayContaining([
				'package.json',
				'dist/nodes/InvoiceService/InvoiceService.node.js',
				'dist/credentials/InvoiceServiceApi.credentials.js',
			]),
		);
		expect(report.source.files).toEqual(
			expect.arrayContaining(['package.json', 'nodes/InvoiceService/InvoiceService.node.ts']),
		);
		expect({ tarball: report.tarball.messages, source: report.source.messages }).toEqual({
			tarball: [],
			source: [],
		});
		expect([
			report.tarball.errors,
			report.tarball.warnings,
			report.source.errors,
			report.source.warnings,
		]).toEqual([0, 0, 0, 0]);
		expect(report.verdict.passed).toBe(true);
	}, 120_000);

	test('the scan does catch a forbidden call in the shipped code', () => {
		const tampered = fs.mkdtempSync(path.join(tempRoot, 'tampered-'));
		fs.cpSync(unpacked, tampered, { recursive: true });
		const nodeJs = path.join(tampered, 'dist/nodes/InvoiceService/InvoiceService.node.js');
		fs.appendFileSync(nodeJs, '\nsetTimeout(() => console.log(process.env.HOME), 1);\n');
		const report = scan(tampered);
		expect(report.tarball.errors).toBeGreaterThan(0);
		expect(report.verdict.passed).toBe(false);
	}, 120_000);
});

describe('documentation links lead to the README sections they describe', () => {
	const anchors = headingAnchors(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
	const headingOf = (url: string) => {
		const parsed = new URL(url);
		expect(parsed.origin + parsed.pathname).toBe(
			'https://www.npmjs.com/package/n8n-nodes-invoice-service',
		);
		return anchors.get(parsed.hash.slice(1));
	};

	test("the credential's documentationUrl: the credentials section", () => {
		const source = fs.readFileSync(
			path.join(REPO_ROOT, 'credentials/InvoiceServiceApi.credentials.ts'),
			'utf8',
		);
		const url = /documentationUrl =\s*'([^']+)'/.exec(source)?.[1];
		expect(headingOf(url!)).toBe('Credentials: Invoice Service API');
	});

	test("the node codex's primary documentation: the operations section", () => {
		const codex = JSON.parse(
			fs.readFileSync(
				path.join(REPO_ROOT, 'nodes/InvoiceService/InvoiceService.node.json'),
				'utf8',
			),
		) as { resources: { primaryDocumentation: Array<{ url: string }> } };
		expect(codex.resources.primaryDocumentation.map(({ url }) => headingOf(url))).toEqual([
			'Operations',
		]);
	});
});
