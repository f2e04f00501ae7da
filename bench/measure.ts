// Measurement: one `n8n execute` of one workflow, with the CPU time of its whole process tree, its peak
// memory, the machine's load average, n8n's own node timings and the sandbox's request counts.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
	REPO_ROOT,
	n8nBin,
	n8nEnv,
	nodeRuns,
	parseRawOutput,
	type N8nHome,
	type NodeExecutionItem,
	type RunData,
} from '../tools/n8n';
import { descendants, readProc, vmHwmKiB } from './proc';
import { measuredNodes, type Scenario } from './workflows';

export interface Measured {
	scenario: Scenario;
	/** 1, 2, 3 for a scenario run several times in a row. */
	repeat: number;
	/** Wall time of the measured node(s) from n8n's run data. */
	nodeMs: number;
	successes: number;
	failures: number;
	firstError?: string;
	/** Set when n8n died without printing run data (the figures are then CPU and memory up to that point). */
	crashed?: string;
	/** CPU seconds (user + system) of the whole `n8n execute` process tree. */
	cpuS: number;
	/** Peak resident memory of the n8n processes (largest VmHWM), MiB. */
	peakMiB: number;
	/** n8n's boot to exit. */
	processMs: number;
	/** The machine's 1-minute load average when the run started and when it ended. */
	load: [number, number];
	requests: number;
	rateLimited: number;
	maxInFlight: number;
}

export const log = (msg: string): void => {
	process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

export function fmt(n: number, digits = 2): string {
	return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

export function throughput(m: Measured): number {
	return m.successes / (m.nodeMs / 1000);
}

function readAndRemove(file: string): string {
	try {
		return fs.readFileSync(file, 'utf8');
	} catch {
		return '';
	} finally {
		fs.rmSync(file, { force: true });
	}
}

/** `BENCH_CPU_PROF=<folder>`: each n8n process writes a V8 CPU profile there (open it in Chrome's DevTools). */
function profileEnv(): NodeJS.ProcessEnv {
	const folder = process.env.BENCH_CPU_PROF;
	return folder ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(folder)}` } : {};
}

interface Execution {
	code: number;
	stdout: string;
	stderr: string;
	ms: number;
	cpuS: number;
	peakMiB: number;
}

/**
 * `n8n execute --id=<id> --rawOutput` inside `bash -c '...; times'`: bash's `times` prints the CPU time of
 * its waited-for children (n8n and anything n8n started and reaped, e.g. the task runner) on its last line.
 */
function execute(home: N8nHome, workflowId: string, timeoutMs: number): Promise<Execution> {
	// n8n's stdout goes to a file, not a pipe: with 50,000 items the run JSON is tens of MB, and a pipe loses
	// its tail when n8n exits while Node.js still has writes queued (seen: exit 0 and no run data).
	const stdoutFile = path.join(home.userFolder, `stdout-${workflowId}.json`);
	const script = 'out=$1; shift; "$@" >"$out"; rc=$?; times >&2; exit $rc';
	const started = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawn(
			'bash',
			[
				path.join(REPO_ROOT, 'scripts', 'with-node24.sh'),
				'bash',
				'-c',
				script,
				'bench-n8n',
				stdoutFile,
				n8nBin(home.version),
				'execute',
				`--id=${workflowId}`,
				'--rawOutput',
			],
			{
				cwd: home.userFolder,
				env: n8nEnv(home, profileEnv()),
				stdio: ['ignore', 'ignore', 'pipe'],
			},
		);
		let stderr = '';
		child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
		// Scanning /proc for the process tree costs a few ms and would delay the sandbox (same process), so the
		// tree is looked up once a second; the known n8n processes' VmHWM (a high-water mark) every 250 ms.
		const peak = new Map<number, number>();
		let lastScan = 0;
		const sample = () => {
			if (child.pid === undefined) return;
			if (Date.now() - lastScan >= 1000) {
				lastScan = Date.now();
				for (const pid of descendants(child.pid)) {
					if (!peak.has(pid) && /n8n/.test(readProc(pid, 'cmdline'))) peak.set(pid, 0);
				}
			}
			for (const [pid, kib] of peak) peak.set(pid, Math.max(kib, vmHwmKiB(pid)));
		};
		const sampler = setInterval(sample, 250);
		const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
		child.on('error', reject);
		child.on('close', (code) => {
			clearInterval(sampler);
			clearTimeout(killer);
			// `times`: "0m0.010s 0m0.004s" (the shell) then the children's user and system time
			const lines = stderr.trim().split('\n');
			const last = lines[lines.length - 1] ?? '';
			const m = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(last.trim());
			const cpuS = m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : NaN;
			resolve({
				code: code ?? 1,
				stdout: readAndRemove(stdoutFile),
				stderr,
				ms: Date.now() - started,
				cpuS,
				peakMiB: Math.max(0, ...peak.values()) / 1024,
			});
		});
	});
}

// ---------------------------------------------------------------------------------------------------------
// Reading n8n's run data

function itemsOf(run: RunData | undefined, nodeName: string): NodeExecutionItem[] {
	return nodeRuns(run, nodeName).flatMap((task) => task.data?.main?.[0] ?? []);
}

/** From the first start to the last end of the nodes' runs (the loop runs once per item). */
function spanMs(run: RunData | undefined, nodeNames: string[]): number {
	let start = Infinity;
	let end = -Infinity;
	for (const name of nodeNames) {
		for (const task of nodeRuns(run, name)) {
			const taskStart = Number(task.startTime);
			start = Math.min(start, taskStart);
			end = Math.max(end, taskStart + Number(task.executionTime));
		}
	}
	return end - start;
}

function describeError(error: unknown): string {
	const text =
		typeof error === 'object' && error !== null
			? String((error as { message?: unknown }).message ?? JSON.stringify(error))
			: String(error);
	return text.slice(0, 160);
}

// ---------------------------------------------------------------------------------------------------------

const TIMEOUT_MS = 30 * 60_000;
/** A run without run data that ended sooner than this died while starting, and is tried once more. */
const START_UP_DEATH_MS = 90_000;

/** Runs one scenario once against a freshly reset sandbox and measures it. */
export async function measure(
	home: N8nHome,
	scenario: Scenario,
	repeat: number,
): Promise<Measured> {
	scenario.sandbox.reset();
	const loadBefore = os.loadavg()[0];
	log(
		`${scenario.group} ${scenario.label}${repeat > 1 ? ` (run ${repeat})` : ''}: ${scenario.items} items, load ${fmt(loadBefore)} ...`,
	);
	let exec = await execute(home, scenario.id, TIMEOUT_MS);
	let run = parseRawOutput(exec.stdout);
	if (!run && exec.ms < START_UP_DEATH_MS) {
		// n8n occasionally dies before printing anything (seen here: exit 134 at start-up); run it once more
		log(
			`  no run data (exit ${exec.code}); running it again. stderr tail:\n${exec.stderr.slice(-800)}`,
		);
		scenario.sandbox.reset();
		exec = await execute(home, scenario.id, TIMEOUT_MS);
		run = parseRawOutput(exec.stdout);
	}
	if (!run) {
		// A run that dies half-way (e.g. out of memory at 50,000 items) is a result, not a bench failure.
		const crashed = /heap out of memory/i.test(exec.stderr)
			? 'n8n ran out of memory'
			: `n8n exited ${exec.code} without run data`;
		log(`  ${crashed}; stderr tail:\n${exec.stderr.slice(-1500)}`);
		return {
			scenario,
			repeat,
			nodeMs: NaN,
			successes: 0,
			failures: scenario.items,
			firstError: crashed,
			crashed,
			cpuS: exec.cpuS,
			peakMiB: exec.peakMiB,
			processMs: exec.ms,
			load: [loadBefore, os.loadavg()[0]],
			requests: NaN,
			rateLimited: NaN,
			maxInFlight: NaN,
		};
	}
	const { outputNode, timedNodes } = measuredNodes(scenario.kind);
	const outputs = itemsOf(run, outputNode);
	const failures = outputs.filter((item) => item.json.error !== undefined);
	const stats = scenario.sandbox.stats();
	const m: Measured = {
		scenario,
		repeat,
		nodeMs: spanMs(run, timedNodes),
		successes: outputs.length - failures.length,
		failures: failures.length,
		firstError: failures[0] ? describeError(failures[0].json.error) : undefined,
		cpuS: exec.cpuS,
		peakMiB: exec.peakMiB,
		processMs: exec.ms,
		load: [loadBefore, os.loadavg()[0]],
		requests: stats.requests.total,
		rateLimited: stats.faults.rateLimited,
		maxInFlight: stats.concurrency.max,
	};
	if (exec.code !== 0) {
		log(
			`  n8n exited ${exec.code} after printing the run data; stderr tail:\n${exec.stderr.slice(-1500)}`,
		);
	}
	if (scenario.kind !== 'baseline' && outputs.length !== scenario.items) {
		log(`  WARNING: ${outputs.length} output items for ${scenario.items} inputs`);
	}
	log(
		`  exit ${exec.code}, node ${m.nodeMs} ms, ${m.successes} ok / ${m.failures} failed, cpu ${fmt(m.cpuS)} s, peak ${fmt(m.peakMiB, 0)} MiB, process ${exec.ms} ms, load ${fmt(m.load[0])} → ${fmt(m.load[1])}${m.firstError ? `; first error: ${m.firstError}` : ''}`,
	);
	return m;
}
