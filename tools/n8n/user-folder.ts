// n8n user folders ("homes"): a fresh N8N_USER_FOLDER per run with the packed package installed as a community
// node, and the environment n8n runs with.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { freePort, mustRun } from './process';
import { PACKAGE_NAME } from './project';

/** Fixed key so credentials imported in one boot decrypt in the next. */
export const ENCRYPTION_KEY = 'e2e-not-secret';

export interface N8nHome {
	version: string;
	/** N8N_USER_FOLDER; n8n keeps its data in `<userFolder>/.n8n`. */
	userFolder: string;
	n8nDir: string;
	/** Where community packages live (`<n8nDir>/nodes/node_modules/<package>`). */
	nodesDir: string;
	/** n8n's task broker port (2.x). */
	brokerPort: number;
	/** How long installing the tarball took. */
	installMs: number;
}

/**
 * A fresh N8N_USER_FOLDER with the packed tarball installed the way n8n's "Install community node" does it
 * (n8n 2.x CommunityPackagesService.downloadPackage): unpack the tarball into
 * `<userFolder>/.n8n/nodes/node_modules/<package>`, drop dev/peer/optional dependencies from its package.json
 * (n8n-workflow comes from n8n itself), `npm install` its runtime dependencies there with scripts off, and
 * record the package in `<userFolder>/.n8n/nodes/package.json`.
 */
export async function createN8nHome(
	version: string,
	tarball?: string,
	opts: { parentDir?: string } = {},
): Promise<N8nHome> {
	const parent = opts.parentDir ?? os.tmpdir();
	fs.mkdirSync(parent, { recursive: true });
	const userFolder = fs.mkdtempSync(path.join(parent, `n8n-${version}-`));
	const n8nDir = path.join(userFolder, '.n8n');
	const nodesDir = path.join(n8nDir, 'nodes');
	fs.mkdirSync(nodesDir, { recursive: true });
	const nodesPackageJson = {
		name: 'installed-nodes',
		private: true,
		dependencies: {} as Record<string, string>,
	};
	let installMs = 0;
	if (tarball) {
		const started = Date.now();
		const pkgDir = path.join(nodesDir, 'node_modules', PACKAGE_NAME);
		fs.mkdirSync(pkgDir, { recursive: true });
		await mustRun('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
		const pkgJsonPath = path.join(pkgDir, 'package.json');
		const { devDependencies, peerDependencies, optionalDependencies, ...pkgJson } = JSON.parse(
			fs.readFileSync(pkgJsonPath, 'utf8'),
		) as Record<string, unknown> & { version: string };
		void devDependencies;
		void peerDependencies;
		void optionalDependencies;
		fs.writeFileSync(pkgJsonPath, JSON.stringify(pkgJson, null, 2));
		await mustRun(
			'npm',
			[
				'install',
				'--audit=false',
				'--fund=false',
				'--bin-links=false',
				'--install-strategy=shallow',
				'--ignore-scripts=true',
				'--package-lock=false',
			],
			{ cwd: pkgDir },
		);
		nodesPackageJson.dependencies[PACKAGE_NAME] = pkgJson.version;
		installMs = Date.now() - started;
	}
	fs.writeFileSync(path.join(nodesDir, 'package.json'), JSON.stringify(nodesPackageJson, null, 2));
	return { version, userFolder, n8nDir, nodesDir, brokerPort: await freePort(), installMs };
}

/** The environment n8n runs with: its own user folder, quiet, no telemetry, no proxy, fixed key. */
export function n8nEnv(home: N8nHome, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env };
	for (const k of Object.keys(env)) {
		if (/^(https?|all|no)_proxy$/i.test(k) || k.startsWith('N8N_') || k.startsWith('DB_'))
			delete env[k];
	}
	// jest sets NODE_ENV=test, which n8n reads too.
	delete env.NODE_ENV;
	delete env.NODE_OPTIONS;
	Object.assign(env, {
		NO_PROXY: '127.0.0.1,localhost,::1',
		no_proxy: '127.0.0.1,localhost,::1',
		N8N_USER_FOLDER: home.userFolder,
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_RUNNERS_BROKER_PORT: String(home.brokerPort),
		N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
		N8N_SECURE_COOKIE: 'false',
		...extra,
	});
	return env;
}

/** Removes a home folder (best effort). */
export function removeHome(home: N8nHome): void {
	fs.rmSync(home.userFolder, { recursive: true, force: true });
}
