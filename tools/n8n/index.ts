/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions, no-console */
// Drives a real n8n (installed once into a cache by scripts/install-n8n.sh) headlessly: pack this package,
// install the tarball as a community node into a fresh n8n user folder, import credentials and workflows,
// run each workflow with `n8n execute --id=<id> --rawOutput` and parse the run data.
// Used by the e2e tests, the demo and the benchmark.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export const PACKAGE_NAME = 'n8n-nodes-invoice-service';
/** Node type of the Invoice Service node when installed as a community package. */
export const NODE_TYPE = `${PACKAGE_NAME}.invoiceService`;
export const CREDENTIAL_TYPE = 'invoiceServiceApi';
/** The n8n versions supported and tested: the newest 2.x that resolves here, and the last 1.x. */
export const SUPPORTED_N8N_VERSIONS = ['2.41.1', '1.123.81'];
export const DEFAULT_N8N_VERSION = SUPPORTED_N8N_VERSIONS[0];
/**
 * The versions the e2e tests run against: all supported ones, or a comma-separated list in
 * INVOICE_SERVICE_E2E_N8N_VERSIONS (e.g. `2.41.1` for a quicker loop).
 */
export const N8N_VERSIONS: string[] = (process.env.INVOICE_SERVICE_E2E_N8N_VERSIONS ?? '')
	.split(',')
	.map((v) => v.trim())
	.filter(Boolean);
if (N8N_VERSIONS.length === 0) N8N_VERSIONS.push(...SUPPORTED_N8N_VERSIONS);
/** Fixed key so credentials imported in one boot decrypt in the next. */
export const ENCRYPTION_KEY = 'e2e-not-secret';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const NODE24 = path.join(REPO_ROOT, 'scripts', 'with-node24.sh');

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
		dir = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'install-n8n.sh'), '--dir', version], {
			encoding: 'utf8',
		}).trim();
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

// ---------------------------------------------------------------------------------------------------------
// Small process helpers

export interface ProcResult {
	/** Exit code; 128 when the process was ended by a signal (see `signal`). */
	code: number;
	signal?: string;
	stdout: string;
	stderr: string;
	ms: number;
}

/** Runs a command (through scripts/with-node24.sh so Node 24 is first on PATH), collecting its output. */
export function run(
	cmd: string,
	args: string[],
	opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; echo?: boolean } = {},
): Promise<ProcResult> {
	const started = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawn('bash', [NODE24, cmd, ...args], {
			cwd: opts.cwd ?? REPO_ROOT,
			env: opts.env ?? process.env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (d: Buffer) => {
			stdout += d.toString();
			if (opts.echo) process.stdout.write(d);
		});
		child.stderr.on('data', (d: Buffer) => {
			stderr += d.toString();
			if (opts.echo) process.stderr.write(d);
		});
		let timer: NodeJS.Timeout | undefined;
		if (opts.timeoutMs) {
			timer = setTimeout(() => {
				stderr += `\n[driver] killed after ${opts.timeoutMs} ms`;
				child.kill('SIGKILL');
			}, opts.timeoutMs);
		}
		child.on('error', reject);
		child.on('close', (code, signal) => {
			if (timer) clearTimeout(timer);
			if (signal) stderr += `\n[driver] ${cmd} ended by signal ${signal}`;
			resolve({
				code: code ?? 128,
				signal: signal ?? undefined,
				stdout,
				stderr,
				ms: Date.now() - started,
			});
		});
	});
}

async function mustRun(cmd: string, args: string[], opts: Parameters<typeof run>[2] = {}) {
	const r = await run(cmd, args, opts);
	if (r.code !== 0) {
		throw new Error(
			`${cmd} ${args.join(' ')} failed (exit ${r.code}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`,
		);
	}
	return r;
}

/** A free TCP port on 127.0.0.1 (for n8n's task broker, which otherwise takes 5679). */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.unref();
		srv.on('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const addr = srv.address();
			srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
		});
	});
}

// ---------------------------------------------------------------------------------------------------------
// Install n8n, pack the package

/**
 * Makes sure the given n8n versions are in the cache, running scripts/install-n8n.sh (about 4 minutes per
 * version) when one is missing. Progress goes to stderr.
 */
export async function ensureN8nInstalled(
	versions: readonly string[] = N8N_VERSIONS,
): Promise<void> {
	const missing = versions.filter((v) => !isN8nInstalled(v));
	if (missing.length === 0) return;
	console.error(
		`[e2e] installing n8n ${missing.join(', ')} into ${n8nCacheDir()} (about 4 min each)`,
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
 * nodes/, credentials/ or package.json changed).
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

// ---------------------------------------------------------------------------------------------------------
// n8n homes and runs

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

/** Runs one n8n CLI command for a home. */
export function n8n(
	home: N8nHome,
	args: string[],
	opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProcResult> {
	return run(n8nBin(home.version), args, {
		cwd: home.userFolder,
		env: n8nEnv(home, opts.env),
		timeoutMs: opts.timeoutMs ?? 180_000,
	});
}

export interface CredentialImport {
	id: string;
	name: string;
	type: string;
	/** Plaintext; n8n encrypts it on import with N8N_ENCRYPTION_KEY. */
	data: Record<string, unknown>;
}

// Loose shapes of what `--rawOutput` prints (IRun).
export interface NodeExecutionItem {
	json: Record<string, unknown>;
	binary?: Record<string, BinaryRef>;
	pairedItem?: unknown;
	error?: unknown;
}
export interface BinaryRef {
	data?: string;
	id?: string;
	mimeType?: string;
	fileName?: string;
	fileExtension?: string;
	fileSize?: string;
	[k: string]: unknown;
}
export interface TaskData {
	data?: { main?: Array<NodeExecutionItem[] | null> };
	error?: { message?: string; description?: string; httpCode?: string; [k: string]: unknown };
	executionStatus?: string;
	[k: string]: unknown;
}
export interface RunData {
	finished?: boolean;
	status?: string;
	mode?: string;
	data: {
		resultData: {
			runData: Record<string, TaskData[]>;
			error?: {
				message?: string;
				description?: string;
				node?: { name?: string };
				[k: string]: unknown;
			};
			lastNodeExecuted?: string;
		};
	};
	[k: string]: unknown;
}

export interface WorkflowResult {
	id: string;
	name: string;
	/** n8n's exit code (0 ok, 1 the run failed); see crashSignal. */
	code: number;
	/** Set when n8n was ended by a signal after printing the run (a shutdown crash, not a run failure). */
	crashSignal?: string;
	/** The parsed run data, or undefined when n8n printed none. */
	run?: RunData;
	stdout: string;
	stderr: string;
	ms: number;
}

export interface RunWorkflowsResult {
	results: Record<string, WorkflowResult>;
	importMs: number;
	totalMs: number;
}

/**
 * Finds the run JSON in n8n's stdout: it starts at the first line beginning with `{` and ends at the first
 * later line that is exactly `}` for which the text parses (n8n pretty-prints with two spaces).
 */
export function parseRawOutput(stdout: string): RunData | undefined {
	const lines = stdout.split(/\r?\n/);
	const start = lines.findIndex((l) => l.startsWith('{'));
	if (start < 0) return undefined;
	if (lines[start].trim().endsWith('}')) {
		try {
			return JSON.parse(lines[start]) as RunData;
		} catch {
			// a multi-line object after all
		}
	}
	for (let end = start + 1; end < lines.length; end++) {
		if (lines[end] !== '}') continue;
		try {
			return JSON.parse(lines.slice(start, end + 1).join('\n')) as RunData;
		} catch {
			// keep looking
		}
	}
	return undefined;
}

// Workflow ids must be at most 16 characters.
function checkWorkflowIds(workflows: Array<Record<string, unknown>>) {
	for (const wf of workflows) {
		const id = wf.id;
		if (typeof id !== 'string' || id.length === 0 || id.length > 16) {
			throw new Error(
				`workflow "${String(wf.name)}" needs an id of 1..16 characters, got ${String(id)}`,
			);
		}
	}
}

/**
 * Imports credentials and workflows into the home (one `import:*` boot each), then runs each workflow with
 * `n8n execute --id=<id> --rawOutput` (one boot each) and returns the parsed run data per workflow id.
 */
export async function runWorkflows(
	home: N8nHome,
	input: {
		credentials?: CredentialImport[];
		workflows: Array<Record<string, unknown>>;
		env?: NodeJS.ProcessEnv;
		log?: (msg: string) => void;
	},
): Promise<RunWorkflowsResult> {
	const started = Date.now();
	const log = input.log ?? (() => undefined);
	checkWorkflowIds(input.workflows);
	const importDir = fs.mkdtempSync(path.join(home.userFolder, 'import-'));
	if (input.credentials?.length) {
		const credFile = path.join(importDir, 'credentials.json');
		fs.writeFileSync(credFile, JSON.stringify(input.credentials, null, 2));
		const r = await n8n(home, ['import:credentials', `--input=${credFile}`], { env: input.env });
		if (r.code !== 0)
			throw new Error(`n8n import:credentials failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
		log(`import:credentials ${r.ms} ms`);
	}
	const wfFile = path.join(importDir, 'workflows.json');
	fs.writeFileSync(
		wfFile,
		JSON.stringify(
			input.workflows.map((wf) => ({ active: false, settings: {}, pinData: {}, ...wf })),
			null,
			2,
		),
	);
	const imp = await n8n(home, ['import:workflow', `--input=${wfFile}`], { env: input.env });
	if (imp.code !== 0)
		throw new Error(`n8n import:workflow failed (exit ${imp.code}):\n${imp.stdout}\n${imp.stderr}`);
	log(`import:workflow ${imp.ms} ms`);
	const importMs = Date.now() - started;

	const results: Record<string, WorkflowResult> = {};
	for (const wf of input.workflows) {
		const id = wf.id as string;
		const r = await n8n(home, ['execute', `--id=${id}`, '--rawOutput'], { env: input.env });
		const run = parseRawOutput(r.stdout);
		let code = r.code;
		// n8n 1.123 on Node 24 now and then dies with SIGSEGV while shutting down, after it printed the
		// complete run (seen after failed runs). The run itself is over; take the exit code n8n would have
		// given (1 when the run has an error) and keep the signal in `crashSignal`. Never re-run: the workflow
		// has side effects.
		if (r.signal && run) code = run.data?.resultData?.error ? 1 : 0;
		log(
			`execute ${id} exit ${code}${r.signal ? ` (n8n then died by ${r.signal})` : ''} ${r.ms} ms`,
		);
		results[id] = {
			id,
			name: String(wf.name),
			code,
			crashSignal: r.signal,
			run,
			stdout: r.stdout,
			stderr: r.stderr,
			ms: r.ms,
		};
	}
	return { results, importMs, totalMs: Date.now() - started };
}

// ---------------------------------------------------------------------------------------------------------
// n8n as a server (for what only the REST API offers, like the credential "Test" button)

export interface N8nServer {
	url: string;
	/** How long the server took to answer its first REST call. */
	bootMs: number;
	/** A REST call as the owner (after `setupOwner`), JSON in and out; `data` unwrapped when present. */
	rest(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
	/** Creates the instance owner and keeps its session cookie for `rest`. */
	setupOwner(): Promise<void>;
	output(): string;
	stop(): Promise<void>;
}

export interface ProcessHandle {
	child: ChildProcess;
	output(): string;
	exited(): boolean;
	/** Resolves once the output matches, rejects when the process exits first or after timeoutMs. */
	waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
	stop(): Promise<void>;
}

/** Starts a long-running process in its own process group (so stop() ends its children too). */
export function startProcess(
	cmd: string,
	args: string[],
	opts: { env?: NodeJS.ProcessEnv; cwd?: string },
): ProcessHandle {
	const child = spawn(cmd, args, {
		cwd: opts.cwd,
		env: opts.env ?? process.env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	let out = '';
	child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
	child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
	let exited = false;
	// If jest itself goes away without afterAll (a crash, process.exit), take the process group along.
	const killOnExit = () => {
		if (!exited && child.pid !== undefined) {
			try {
				process.kill(-child.pid, 'SIGKILL');
			} catch {
				// gone
			}
		}
	};
	process.once('exit', killOnExit);
	child.once('exit', () => process.removeListener('exit', killOnExit));
	const exit = new Promise<void>((resolve) =>
		child.once('exit', () => {
			exited = true;
			resolve();
		}),
	);
	return {
		child,
		output: () => out,
		exited: () => exited,
		async waitFor(re, timeoutMs) {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const m = out.match(re);
				if (m) return m;
				if (exited) throw new Error(`${cmd} exited before printing ${re}:\n${out.slice(-4000)}`);
				if (Date.now() > deadline)
					throw new Error(`${cmd} did not print ${re} in ${timeoutMs} ms:\n${out.slice(-4000)}`);
				await new Promise((r) => setTimeout(r, 200));
			}
		},
		async stop() {
			if (exited || child.pid === undefined) return;
			try {
				process.kill(-child.pid, 'SIGTERM');
			} catch {
				return;
			}
			const timer = setTimeout(() => {
				try {
					process.kill(-child.pid!, 'SIGKILL');
				} catch {
					// gone
				}
			}, 20_000);
			await exit;
			clearTimeout(timer);
		},
	};
}

/** One Redis command over RESP on a fresh connection (enough for PING / INFO / DBSIZE). */

const BROWSER_ID = 'n8n-nodes-invoice-service-e2e';

/** Starts `n8n start` for a home on a free loopback port and waits until its REST API answers. */
export async function startN8nServer(
	home: N8nHome,
	opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<N8nServer> {
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const started = Date.now();
	const proc = startProcess('bash', [NODE24, n8nBin(home.version), 'start'], {
		cwd: home.userFolder,
		env: n8nEnv(home, {
			N8N_PORT: String(port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			...opts.env,
		}),
	});
	const { stop } = proc;
	let cookie = '';

	const rest: N8nServer['rest'] = async (method, route, body) => {
		const res = await fetch(`${url}/rest${route}`, {
			method,
			headers: {
				'content-type': 'application/json',
				'browser-id': BROWSER_ID,
				...(cookie ? { cookie } : {}),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = res.headers.getSetCookie?.() ?? [];
		const auth = setCookie.find((c) => c.startsWith('n8n-auth='));
		if (auth) cookie = auth.split(';')[0];
		const text = await res.text();
		let parsed: unknown = text;
		try {
			parsed = JSON.parse(text);
		} catch {
			// not JSON
		}
		if (parsed && typeof parsed === 'object' && 'data' in parsed)
			parsed = (parsed as { data: unknown }).data;
		return { status: res.status, body: parsed };
	};

	const deadline = started + (opts.timeoutMs ?? 120_000);
	for (;;) {
		if (proc.exited())
			throw new Error(`n8n start exited before it was ready:\n${proc.output().slice(-4000)}`);
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`n8n start did not answer on ${url} in time:\n${proc.output().slice(-4000)}`);
		}
		try {
			// While booting, n8n answers every route with 200 "n8n is starting up. Please wait".
			const r = await fetch(`${url}/rest/settings`, { headers: { 'browser-id': BROWSER_ID } });
			const text = await r.text();
			if (r.status === 200 && text.startsWith('{"data"')) break;
		} catch {
			// not listening yet
		}
		await new Promise((r) => setTimeout(r, 250));
	}
	const bootMs = Date.now() - started;

	return {
		url,
		bootMs,
		rest,
		output: proc.output,
		stop,
		async setupOwner() {
			const r = await rest('POST', '/owner/setup', {
				email: 'owner@example.com',
				firstName: 'E2E',
				lastName: 'Owner',
				password: 'E2e-owner-pw-1',
			});
			if (r.status !== 200 || !cookie) {
				throw new Error(`owner setup failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
			}
		},
	};
}

/**
 * Runs the credential "Test" button's server side (POST /rest/credentials/test) for a credential saved
 * first (POST /rest/credentials), as the owner. Returns n8n's verdict: `{ status: 'OK' | 'Error', message }`.
 */
export async function testCredential(
	server: N8nServer,
	credential: { name: string; type: string; data: Record<string, unknown> },
): Promise<{ status: string; message: string }> {
	const created = await server.rest('POST', '/credentials', credential);
	const id = (created.body as { id?: string } | undefined)?.id;
	if (created.status !== 200 || !id) {
		throw new Error(
			`creating credential failed: HTTP ${created.status} ${JSON.stringify(created.body)}`,
		);
	}
	const r = await server.rest('POST', '/credentials/test', {
		credentials: { id, name: credential.name, type: credential.type, data: credential.data },
	});
	if (r.status !== 200)
		throw new Error(`credential test failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
	return r.body as { status: string; message: string };
}

// ---------------------------------------------------------------------------------------------------------
// Reading run data

/** All runs of a node (empty when the node did not run). */
export function nodeRuns(run: RunData | undefined, nodeName: string): TaskData[] {
	return run?.data?.resultData?.runData?.[nodeName] ?? [];
}

/** `runData.<nodeName>[runIndex].data.main[output]` (an empty array when absent). */
export function nodeOutput(
	run: RunData | undefined,
	nodeName: string,
	output = 0,
	runIndex = 0,
): NodeExecutionItem[] {
	return nodeRuns(run, nodeName)[runIndex]?.data?.main?.[output] ?? [];
}

/** The json of each item of a node output. */
export function outputJson(
	run: RunData | undefined,
	nodeName: string,
	output = 0,
): Array<Record<string, unknown>> {
	return nodeOutput(run, nodeName, output).map((i) => i.json);
}

/** The error of a node that failed (its task's `error`), or the run's error when it names that node. */
export function nodeError(
	run: RunData | undefined,
	nodeName: string,
): { message?: string; description?: string; [k: string]: unknown } | undefined {
	const task = nodeRuns(run, nodeName)[0];
	if (task?.error) return task.error;
	const err = run?.data?.resultData?.error;
	if (err && (!err.node || err.node.name === nodeName)) return err;
	return undefined;
}

/** Which nodes ran, in the run data. */
export function nodesThatRan(run: RunData | undefined): string[] {
	return Object.keys(run?.data?.resultData?.runData ?? {});
}

/**
 * The bytes of a binary property. n8n keeps binary data either inline (base64 in `data`, the "default"
 * mode, 1.x's default) or on disk (`id` = `filesystem-v2:<path>`, `data` = "filesystem-v2": 2.x's default,
 * under `<n8nDir>/storage`).
 */
export function readBinary(home: N8nHome, ref: BinaryRef): Buffer {
	if (ref.id && typeof ref.id === 'string') {
		const sep = ref.id.indexOf(':');
		const mode = ref.id.slice(0, sep);
		const rest = ref.id.slice(sep + 1);
		if (mode.startsWith('filesystem')) {
			// N8N_BINARY_DATA_STORAGE_PATH defaults to <n8nDir>/storage (2.x) or <n8nDir>/binaryData (1.x).
			const candidates = ['storage', 'binaryData'].map((d) => path.join(home.n8nDir, d, rest));
			for (const c of candidates) if (fs.existsSync(c)) return fs.readFileSync(c);
			throw new Error(`binary ${ref.id} not found in ${candidates.join(' or ')}`);
		}
		throw new Error(`binary data mode "${mode}" is not readable by the e2e driver`);
	}
	if (typeof ref.data === 'string') return Buffer.from(ref.data, 'base64');
	throw new Error(`binary reference has neither data nor id: ${JSON.stringify(ref)}`);
}

/** Removes a home folder (best effort). */
export function removeHome(home: N8nHome): void {
	fs.rmSync(home.userFolder, { recursive: true, force: true });
}

/** Reads a JSON file of examples/ (workflows users can import). */
export function loadExample(name: string): Record<string, unknown> {
	return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8')) as Record<
		string,
		unknown
	>;
}

/**
 * A copy of an example workflow ready to import: a new id (at most 16 characters), and every Invoice Service
 * node pointed at the given credential.
 */
export function prepareWorkflow(
	workflow: Record<string, unknown>,
	opts: { id: string; name?: string; credential?: { id: string; name: string } },
): Record<string, unknown> {
	const wf = JSON.parse(JSON.stringify(workflow)) as Record<string, unknown> & {
		nodes: Array<Record<string, unknown>>;
	};
	wf.id = opts.id;
	if (opts.name) wf.name = opts.name;
	delete wf.meta;
	delete wf.versionId;
	if (opts.credential) {
		for (const node of wf.nodes) {
			if (node.type === NODE_TYPE) {
				node.credentials = {
					[CREDENTIAL_TYPE]: { id: opts.credential.id, name: opts.credential.name },
				};
			}
		}
	}
	return wf;
}
