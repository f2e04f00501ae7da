// The n8n installer's own check: an install counts only when n8n opens a fresh SQLite database and runs a
// workflow. A repeat of the "SQLite driver left unbuilt" defect must fail here, in `npm test`, not for a user.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { N8N_VERSIONS, REPO_ROOT, ensureN8nInstalled, n8nInstallDir } from '../../tools/n8n';

const INSTALLER = path.join(REPO_ROOT, 'scripts', 'install-n8n.sh');

function runInstaller(args: string[], env: Record<string, string> = {}) {
	const result = spawnSync('bash', [INSTALLER, ...args], {
		encoding: 'utf8',
		env: { ...process.env, ...env },
		timeout: 180_000,
	});
	return { code: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe.each(N8N_VERSIONS)('n8n %s install', (version) => {
	beforeAll(async () => {
		await ensureN8nInstalled([version]);
	}, 900_000);

	test('lives in a folder keyed by the installer recipe and the Node version', () => {
		const dir = n8nInstallDir(version);
		expect(path.basename(dir)).toMatch(
			new RegExp(`^${version.replace(/\./g, '\\.')}-[0-9a-f]{12}$`),
		);
		expect(fs.readFileSync(path.join(dir, '.installed'), 'utf8')).toContain(process.version);
	});

	test('opens a fresh database and runs a workflow with an expression (--check)', () => {
		const result = runInstaller(['--check', version]);
		expect(result.stderr).toContain(`n8n ${version} in ${n8nInstallDir(version)}: OK`);
		expect(result.code).toBe(0);
	}, 200_000);

	test('a missing SQLite driver fails the check, saying what is missing and how to repair', () => {
		// The defect this guards against: sqlite3's native binding not built. Simulated by refusing to load it.
		const blocker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'no-sqlite-')), 'block.js');
		fs.writeFileSync(
			blocker,
			`const Module = require('module');
const load = Module._load;
Module._load = function (request, ...rest) {
	if (request === 'sqlite3') throw new Error("Cannot find module 'sqlite3' (blocked by the installer test)");
	return load.call(this, request, ...rest);
};
`,
		);
		try {
			const result = runInstaller(['--check', version], { NODE_OPTIONS: `--require ${blocker}` });
			expect(result.code).toBe(1);
			expect(result.stderr).toContain(`n8n ${version} in ${n8nInstallDir(version)} is BROKEN`);
			expect(result.stderr).toContain('SQLite');
			expect(result.stderr).toContain(`repair: npm run n8n:install -- --repair ${version}`);
		} finally {
			fs.rmSync(path.dirname(blocker), { recursive: true, force: true });
		}
	}, 200_000);
});

test('a change to the recipe or the Node version gives a new folder', () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'installer-key-'));
	try {
		const scripts = path.join(tmp, 'scripts');
		fs.mkdirSync(scripts);
		for (const name of ['install-n8n.sh', 'node24.sh']) {
			fs.copyFileSync(path.join(REPO_ROOT, 'scripts', name), path.join(scripts, name));
		}
		const dirOf = () =>
			spawnSync('bash', [path.join(scripts, 'install-n8n.sh'), '--dir', '2.41.1'], {
				encoding: 'utf8',
			}).stdout.trim();
		const before = dirOf();
		expect(before).toBe(n8nInstallDir('2.41.1'));
		// A comment outside the recipe changes nothing...
		fs.appendFileSync(path.join(scripts, 'install-n8n.sh'), '\n# a note\n');
		expect(dirOf()).toBe(before);
		// ...an override inside it does.
		const script = fs.readFileSync(path.join(scripts, 'install-n8n.sh'), 'utf8');
		fs.writeFileSync(
			path.join(scripts, 'install-n8n.sh'),
			script.replace('"linkedom": "0.18.14"', '"linkedom": "0.18.13"'),
		);
		expect(dirOf()).not.toBe(before);
	} finally {
		fs.rmSync(tmp, { recursive: true, force: true });
	}
});
