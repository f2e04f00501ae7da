// Child processes: one-shot commands (through scripts/with-node24.sh so Node 24 is first on PATH), long-running
// ones in their own process group, and free loopback ports.
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';

import { REPO_ROOT } from './project';

export const NODE24 = path.join(REPO_ROOT, 'scripts', 'with-node24.sh');

/**
 * How long a started process (n8n, a worker, Redis, PostgreSQL) may take to say it is ready. Each wait ends as
 * soon as the process is ready, so the limit only decides when to give up: generous, because on a busy 2-core
 * machine n8n's boot takes minutes where an idle one takes 15-25 s.
 */
export const READY_LIMIT_MS = 5 * 60_000;

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

/** Throws, with the tail of the output, when a command did not exit 0. */
export function expectSuccess(what: string, result: ProcResult): ProcResult {
	if (result.code !== 0) {
		throw new Error(
			`${what} failed (exit ${result.code}):\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`,
		);
	}
	return result;
}

/** `run`, throwing when the command fails. */
export async function mustRun(
	cmd: string,
	args: string[],
	opts: Parameters<typeof run>[2] = {},
): Promise<ProcResult> {
	return expectSuccess(`${cmd} ${args.join(' ')}`, await run(cmd, args, opts));
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
	opts: {
		env?: NodeJS.ProcessEnv;
		cwd?: string;
		/** Run as this user and group (e.g. PostgreSQL, which refuses to run as root). */
		uid?: number;
		gid?: number;
	},
): ProcessHandle {
	const child = spawn(cmd, args, {
		cwd: opts.cwd,
		env: opts.env ?? process.env,
		uid: opts.uid,
		gid: opts.gid,
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
