// n8n installs (scripts/install-n8n.sh keeps them in a cache) and the packed tarball of this package.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { mustRun } from './process';
import { N8N_VERSIONS, REPO_ROOT } from './project';

export function n8nCacheDir(): string {
	const base =
		process.env.INVOICE_SERVICE_N8N_CACHE ??
		path.join(
			process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
			'n8n-nodes-invoice-service',
			'n8n',
		);
	return base;
}

const installDirs = new Map<string, string>();

/**
 * The folder a version lives in: `<cache>/<version>-<key>`, where the installer's key hashes its recipe and
 * the Node version. Asked of the installer itself (`--dir`), so the two can never disagree.
 */
export function n8nInstallDir(version: string): string {
	let dir = installDirs.get(version);
	if (!dir) {
		dir = execFileSync(
			'bash',
			[path.join(REPO_ROOT, 'scripts', 'install-n8n.sh'), '--dir', version],
			{
				encoding: 'utf8',
			},
		).trim();
		installDirs.set(version, dir);
	}
	return dir;
}

export function n8nBin(version: string): string {
	return path.join(n8nInstallDir(version), 'node_modules', '.bin', 'n8n');
}

export function isN8nInstalled(version: string): boolean {
	const dir = n8nInstallDir(version);
	return fs.existsSync(path.join(dir, '.installed')) && fs.existsSync(n8nBin(version));
}

/**
 * Makes sure the given n8n versions are in the cache, running scripts/install-n8n.sh (about 6-8 minutes per
 * version) when one is missing. Progress goes to stderr.
 */
export async function ensureN8nInstalled(
	versions: readonly string[] = N8N_VERSIONS,
): Promise<void> {
	const missing = versions.filter((v) => !isN8nInstalled(v));
	if (missing.length === 0) return;
	console.error(
		`[e2e] installing n8n ${missing.join(', ')} into ${n8nCacheDir()} (about 6-8 min each)`,
	);
	await mustRun('bash', [path.join(REPO_ROOT, 'scripts', 'install-n8n.sh'), ...missing], {
		echo: true,
	});
}

function hashSources(): string {
	const hash = createHash('sha256');
	const walk = (rel: string) => {
		const abs = path.join(REPO_ROOT, rel);
		if (!fs.existsSync(abs)) return;
		const st = fs.statSync(abs);
		if (st.isDirectory()) {
			for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name));
		} else {
			hash.update(rel);
			hash.update(fs.readFileSync(abs));
		}
	};
	for (const rel of [
		'package.json',
		// The build tools' versions (@n8n/node-cli) come from the lock file.
		'package-lock.json',
		'tsconfig.json',
		'README.md',
		'LICENSE.md',
		'CHANGELOG.md',
		'nodes',
		'credentials',
	])
		walk(rel);
	return hash.digest('hex').slice(0, 16);
}

const packCache = new Map<string, Promise<string>>();

/**
 * `npm run build` + `npm pack` of the repository into a temp folder; returns the tarball's path. Cached by
 * a hash of the sources (a later call, even from another jest test file, reuses the tarball while nothing in
 * nodes/, credentials/, package.json or the lock file changed).
 */
export function packPackage(opts: { echo?: boolean } = {}): Promise<string> {
	const key = hashSources();
	let p = packCache.get(key);
	if (!p) {
		p = (async () => {
			const dir = path.join(os.tmpdir(), 'n8n-nodes-invoice-service-pack', key);
			const existing = fs.existsSync(dir)
				? fs.readdirSync(dir).find((f) => f.endsWith('.tgz'))
				: undefined;
			if (existing) {
				if (opts.echo)
					console.log(`[pack] sources unchanged since the last pack: reusing ${existing}`);
				return path.join(dir, existing);
			}
			// CI=true: node-cli's spinner prints one line instead of hundreds of frames when not on a TTY.
			await mustRun('npm', ['run', 'build'], {
				echo: opts.echo,
				env: { ...process.env, CI: 'true' },
			});
			const tmp = `${dir}.tmp-${process.pid}`;
			fs.rmSync(tmp, { recursive: true, force: true });
			fs.mkdirSync(tmp, { recursive: true });
			const r = await mustRun('npm', ['pack', '--json', '--pack-destination', tmp]);
			const info = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ filename: string }>;
			fs.rmSync(dir, { recursive: true, force: true });
			fs.renameSync(tmp, dir);
			return path.join(dir, path.basename(info[0].filename));
		})();
		packCache.set(key, p);
		p.catch(() => packCache.delete(key));
	}
	return p;
}
