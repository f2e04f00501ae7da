// `npm run dev`: the edit loop. `tsc --watch` rebuilds dist/ on every change; after each build the compiled
// node and credential are copied into the n8n user folder's custom-extensions directory
// (`<userFolder>/.n8n/custom/node_modules/n8n-nodes-invoice-service`), and the cached n8n (see
// scripts/install-n8n.sh) runs with N8N_DEV_RELOAD=true, so it reloads the node without a restart.
//
// This is what `n8n-node dev` does (link the package into `.n8n/custom`, N8N_DEV_RELOAD, tsc --watch), except
// that it runs the n8n already installed in the cache instead of `npx n8n@latest` (which does not resolve
// here), and that it copies dist/ instead of symlinking the whole repository: a copy resolves `n8n-workflow`
// from n8n itself, as an installed community node does, and n8n does not glob the repository's node_modules.
// In this mode n8n names the node `CUSTOM.invoiceService` (installed from npm it is
// `n8n-nodes-invoice-service.invoiceService`).
//
// Environment: N8N_DEV_VERSION (default: the newest supported n8n), N8N_DEV_USER_FOLDER (default
// ~/.n8n-node-cli, the same folder `n8n-node dev` uses, so workflows and credentials persist), N8N_PORT
// (default 5678). Ctrl+C stops everything.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

import {
	DEFAULT_N8N_VERSION,
	NODE24,
	PACKAGE_NAME,
	REPO_ROOT,
	ensureN8nInstalled,
	freePort,
	n8nBin,
} from '../tools/n8n';

const version = process.env.N8N_DEV_VERSION ?? DEFAULT_N8N_VERSION;
const userFolder = path.resolve(
	process.env.N8N_DEV_USER_FOLDER ?? path.join(os.homedir(), '.n8n-node-cli'),
);
const port = Number(process.env.N8N_PORT ?? 5678);
const customDir = path.join(userFolder, '.n8n', 'custom');
const target = path.join(customDir, 'node_modules', PACKAGE_NAME);
const dist = path.join(REPO_ROOT, 'dist');

const children: ChildProcess[] = [];
let stopping = false;

function log(msg: string) {
	console.log(`[dev] ${msg}`);
}

/** Prefixes each output line of a child process. */
function pipe(child: ChildProcess, prefix: string, onLine?: (line: string) => void) {
	for (const stream of [child.stdout, child.stderr]) {
		let buf = '';
		stream?.on('data', (d: Buffer) => {
			buf += d.toString();
			let i: number;
			while ((i = buf.indexOf('\n')) >= 0) {
				const line = stripVTControlCharacters(buf.slice(0, i)).replace(/\r/g, '');
				buf = buf.slice(i + 1);
				if (line.trim()) console.log(`${prefix} ${line}`);
				onLine?.(line);
			}
		});
	}
}

function start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
	const child = spawn('bash', [NODE24, cmd, ...args], {
		cwd,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	children.push(child);
	child.on('exit', (code, signal) => {
		if (!stopping) {
			log(`${name} exited (${signal ?? code}); stopping`);
			void stop(code ?? 1);
		}
	});
	return child;
}

async function stop(code = 0) {
	if (stopping) return;
	stopping = true;
	for (const child of children) {
		if (child.pid !== undefined && child.exitCode === null) {
			try {
				process.kill(-child.pid, 'SIGTERM');
			} catch {
				// already gone
			}
		}
	}
	const deadline = Date.now() + 20_000;
	while (
		children.some((c) => c.exitCode === null && c.signalCode === null) &&
		Date.now() < deadline
	) {
		await new Promise((r) => setTimeout(r, 100));
	}
	for (const child of children) {
		if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
			try {
				process.kill(-child.pid, 'SIGKILL');
			} catch {
				// already gone
			}
		}
	}
	process.exit(code);
}

/** tsc does not copy icons: copy every svg/png of nodes/ and credentials/ next to the compiled files. */
function copyStaticFiles() {
	const walk = (rel: string) => {
		const abs = path.join(REPO_ROOT, rel);
		if (!fs.existsSync(abs)) return;
		for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
			const child = path.join(rel, entry.name);
			if (entry.isDirectory()) walk(child);
			else if (/\.(svg|png)$/.test(entry.name)) {
				fs.mkdirSync(path.join(dist, rel), { recursive: true });
				fs.copyFileSync(path.join(REPO_ROOT, child), path.join(dist, child));
			}
		}
	};
	walk('nodes');
	walk('credentials');
}

/**
 * Copies dist/nodes and dist/credentials into the custom-extensions folder: into a hidden folder first (n8n's
 * glob skips dot folders), then swapped in, so n8n's watcher never reloads a half-copied package.
 */
function syncPackage() {
	fs.mkdirSync(path.dirname(target), { recursive: true });
	// `n8n-node dev` leaves a symlink to the whole repository here; replace it.
	if (fs.existsSync(target) && fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target);
	const next = path.join(path.dirname(target), `.${PACKAGE_NAME}-next`);
	fs.rmSync(next, { recursive: true, force: true });
	fs.mkdirSync(path.join(next, 'dist'), { recursive: true });
	for (const dir of ['nodes', 'credentials']) {
		fs.cpSync(path.join(dist, dir), path.join(next, 'dist', dir), { recursive: true });
	}
	fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(next, 'package.json'));
	const old = path.join(path.dirname(target), `.${PACKAGE_NAME}-old`);
	fs.rmSync(old, { recursive: true, force: true });
	if (fs.existsSync(target)) fs.renameSync(target, old);
	fs.renameSync(next, target);
	fs.rmSync(old, { recursive: true, force: true });
}

async function main() {
	process.on('SIGINT', () => void stop(0));
	process.on('SIGTERM', () => void stop(0));

	await ensureN8nInstalled([version]);
	log(`n8n ${version}, user folder ${userFolder}, node copied to ${target}`);

	let n8nStarted = false;
	const startN8n = async () => {
		n8nStarted = true;
		const env: NodeJS.ProcessEnv = { ...process.env };
		for (const k of Object.keys(env))
			if (k.startsWith('N8N_') || k.startsWith('DB_')) delete env[k];
		delete env.NODE_ENV;
		Object.assign(env, {
			N8N_USER_FOLDER: userFolder,
			N8N_DEV_RELOAD: 'true',
			DB_SQLITE_POOL_SIZE: '10',
			N8N_PORT: String(port),
			N8N_RUNNERS_BROKER_PORT: String(await freePort()),
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
			N8N_SECURE_COOKIE: 'false',
		});
		const n8n = start('n8n', n8nBin(version), ['start'], env, userFolder);
		pipe(n8n, '[n8n]', (line) => {
			if (line.includes('Editor is now accessible')) {
				log(
					`ready: open http://localhost:${port} (node type CUSTOM.invoiceService); edit nodes/ or credentials/ and n8n reloads it`,
				);
			}
		});
	};

	fs.mkdirSync(userFolder, { recursive: true });
	const tsc = start(
		'tsc --watch',
		'npx',
		['tsc', '--watch', '--preserveWatchOutput', '-p', 'tsconfig.json'],
		process.env,
	);
	pipe(tsc, '[tsc]', (line) => {
		const m = /Found (\d+) errors?\. Watching for file changes/.exec(line);
		if (!m) return;
		if (!fs.existsSync(path.join(dist, 'nodes'))) {
			log('dist/nodes is missing after the build; not copying');
			return;
		}
		copyStaticFiles();
		syncPackage();
		log(
			`build ${m[1] === '0' ? 'ok' : `with ${m[1]} error(s)`}: copied to n8n's custom folder${n8nStarted ? ' (n8n reloads it)' : ''}`,
		);
		if (!n8nStarted) void startN8n();
	});
}

main().catch((error) => {
	console.error(error);
	void stop(1);
});
