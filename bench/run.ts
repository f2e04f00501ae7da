// `npm run bench` (issue 4): the Invoice Service node against n8n's HTTP Request node (typeVersion 4.2) in ONE
// real n8n 2.41.1 (one user folder, one import of every workflow), against the local sandbox, scenarios P1-P3.
// Node times come from n8n's own run data (startTime / executionTime of the node), never from n8n's boot.
// CPU is the CPU time of the whole `n8n execute` process tree (bash `times`) minus the same for a baseline
// workflow that only makes the items; peak memory is the largest VmHWM of the n8n process.
// BENCH_QUICK=1: 200 items per scenario (a check of the script, not figures to quote).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSandbox, type Sandbox } from '../sandbox/server';
import {
	CREDENTIAL_TYPE,
	DEFAULT_N8N_VERSION,
	NODE_TYPE,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	n8n,
	n8nBin,
	n8nEnv,
	nodeRuns,
	packPackage,
	parseRawOutput,
	removeHome,
	type N8nHome,
	type NodeExecutionItem,
	type RunData,
} from '../tools/n8n';

const QUICK = process.env.BENCH_QUICK === '1';
const VERSION = DEFAULT_N8N_VERSION;
const N_P1 = QUICK ? 200 : 2000;
const N_P2 = QUICK ? 200 : 2000;
const N_P3 = QUICK ? 200 : 10_000;
const RATE = { perSecond: 50, burst: 50 };
const P1_LATENCY = { latencyMs: 40, jitterMs: 30 };
/** 10-150 ms uniform: mean 80 ms. */
const P2_LATENCY = { latencyMs: 80, jitterMs: 70 };
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results.md');
/** BENCH_ONLY=p2ours10,p2loop: run only these scenario ids (for investigating; results.md is then not written). */
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);

const TARGET = 'Target';
const LOOP = 'Loop Over Items';
const SPLIT = 'Split Out';

type Node = Record<string, unknown>;
type Workflow = Record<string, unknown> & { id: string; nodes: Node[] };
type Kind = 'ours' | 'http' | 'http-batching' | 'http-loop' | 'baseline';

interface Scenario {
	id: string;
	scenario: 'P1' | 'P2' | 'P3';
	label: string;
	kind: Kind;
	items: number;
	sandbox: Sandbox;
	workflow: Workflow;
}

interface Measured {
	scenario: Scenario;
	/** Wall time of the measured node(s) from n8n's run data. */
	nodeMs: number;
	successes: number;
	failures: number;
	firstError?: string;
	/** CPU seconds (user + system) of the whole `n8n execute` process tree. */
	cpuS: number;
	/** Peak resident memory of the n8n process (VmHWM), MiB. */
	peakMiB: number;
	bootToExitMs: number;
	/** 1-minute load average of the machine when the run started and ended (other work competing for CPU). */
	load: [number, number];
	requests: number;
	rateLimited: number;
	records: number;
	maxInFlight: number;
}

// ---------------------------------------------------------------------------------------------------------
// Workflows

function makeItemsNodes(prefix: string, count: number): Node[] {
	return [
		{
			id: `${prefix}-trigger`,
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: `${prefix}-make`,
			name: 'Make items',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 0],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{
							id: `${prefix}-a1`,
							name: 'people',
							type: 'array',
							value: `={{ Array.from({ length: ${count} }, (_, i) => ({ first: 'First' + i, last: 'Last' + i, email: '${prefix}.' + i + '@example.com' })) }}`,
						},
					],
				},
				options: {},
			},
		},
		{
			id: `${prefix}-split`,
			name: SPLIT,
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [400, 0],
			parameters: { fieldToSplitOut: 'people', options: {} },
		},
	];
}

function oursNode(prefix: string, credId: string, options: Record<string, unknown>): Node {
	return {
		id: `${prefix}-target`,
		name: TARGET,
		type: NODE_TYPE,
		typeVersion: 1,
		position: [600, 0],
		onError: 'continueRegularOutput',
		parameters: {
			resource: 'customer',
			operation: 'create',
			firstName: '={{ $json.first }}',
			lastName: '={{ $json.last }}',
			email: '={{ $json.email }}',
			additionalFields: {},
			options,
		},
		credentials: { [CREDENTIAL_TYPE]: { id: credId, name: credId } },
	};
}

function httpNode(
	prefix: string,
	name: string,
	sandbox: Sandbox,
	credId: string,
	options: Record<string, unknown>,
): Node {
	return {
		id: `${prefix}-${name === TARGET ? 'target' : 'http'}`,
		name,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [600, 0],
		onError: 'continueRegularOutput',
		parameters: {
			method: 'POST',
			url: `${sandbox.baseUrl}/create-customer`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody:
				'={{ JSON.stringify({ first_name: $json.first, last_name: $json.last, email: $json.email }) }}',
			options,
		},
		credentials: { httpHeaderAuth: { id: credId, name: credId } },
	};
}

function chain(names: string[]): Record<string, unknown> {
	const connections: Record<string, unknown> = {};
	for (let i = 0; i + 1 < names.length; i++) {
		connections[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	}
	return connections;
}

function workflow(
	id: string,
	name: string,
	nodes: Node[],
	connections: Record<string, unknown>,
): Workflow {
	return { id, name, nodes, connections, settings: { executionOrder: 'v1' } };
}

function buildWorkflow(
	id: string,
	kind: Kind,
	items: number,
	sandbox: Sandbox,
	creds: { ours: string; header: string },
	oursOptions: Record<string, unknown> = {},
): Workflow {
	const make = makeItemsNodes(id, items);
	const base = ['Start', 'Make items', SPLIT];
	switch (kind) {
		case 'baseline':
			return workflow(id, `bench ${id}`, make, chain(base));
		case 'ours':
			return workflow(
				id,
				`bench ${id}`,
				[...make, oursNode(id, creds.ours, oursOptions)],
				chain([...base, TARGET]),
			);
		case 'http':
			return workflow(
				id,
				`bench ${id}`,
				[...make, httpNode(id, TARGET, sandbox, creds.header, {})],
				chain([...base, TARGET]),
			);
		case 'http-batching':
			return workflow(
				id,
				`bench ${id}`,
				[
					...make,
					httpNode(id, TARGET, sandbox, creds.header, {
						batching: { batch: { batchSize: 10, batchInterval: 200 } },
					}),
				],
				chain([...base, TARGET]),
			);
		case 'http-loop': {
			// Loop Over Items (Split in Batches v3, batch size 1): output 0 "done", output 1 "loop".
			const loop: Node = {
				id: `${id}-loop`,
				name: LOOP,
				type: 'n8n-nodes-base.splitInBatches',
				typeVersion: 3,
				position: [600, 0],
				parameters: { batchSize: 1, options: {} },
			};
			const http = httpNode(id, TARGET, sandbox, creds.header, {});
			http.position = [800, 100];
			const connections = chain(base);
			connections[SPLIT] = { main: [[{ node: LOOP, type: 'main', index: 0 }]] };
			connections[LOOP] = { main: [[], [{ node: TARGET, type: 'main', index: 0 }]] };
			connections[TARGET] = { main: [[{ node: LOOP, type: 'main', index: 0 }]] };
			return workflow(id, `bench ${id}`, [...make, loop, http], connections);
		}
	}
}

// ---------------------------------------------------------------------------------------------------------
// Running one workflow with CPU and memory measured

function descendants(root: number): number[] {
	const parents = new Map<number, number>();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			parents.set(Number(entry), Number(afterName[1]));
		} catch {
			// the process ended meanwhile
		}
	}
	const found: number[] = [];
	const queue = [root];
	while (queue.length) {
		const pid = queue.shift()!;
		for (const [child, parent] of parents) {
			if (parent === pid) {
				found.push(child);
				queue.push(child);
			}
		}
	}
	return found;
}

function vmHwmKiB(pid: number): number {
	try {
		const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
		return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
	} catch {
		return 0;
	}
}

function commandOf(pid: number): string {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
	} catch {
		return '';
	}
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
	const script = '"$@"; rc=$?; times >&2; exit $rc';
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
				n8nBin(home.version),
				'execute',
				`--id=${workflowId}`,
				'--rawOutput',
			],
			{ cwd: home.userFolder, env: n8nEnv(home), stdio: ['ignore', 'pipe', 'pipe'] },
		);
		const out: Buffer[] = [];
		let stderr = '';
		child.stdout.on('data', (d: Buffer) => out.push(d));
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
					if (!peak.has(pid) && /n8n/.test(commandOf(pid))) peak.set(pid, 0);
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
				stdout: Buffer.concat(out).toString(),
				stderr,
				ms: Date.now() - started,
				cpuS,
				peakMiB: Math.max(0, ...peak.values()) / 1024,
			});
		});
	});
}

// ---------------------------------------------------------------------------------------------------------
// Reading results

function itemsOf(run: RunData | undefined, nodeName: string): NodeExecutionItem[] {
	return nodeRuns(run, nodeName).flatMap((task) => task.data?.main?.[0] ?? []);
}

/** From the first start to the last end of a node's runs (the loop runs once per item). */
function spanMs(run: RunData | undefined, nodeNames: string[]): number {
	let start = Infinity;
	let end = -Infinity;
	for (const name of nodeNames) {
		for (const task of nodeRuns(run, name)) {
			const s = Number(task.startTime);
			const e = s + Number(task.executionTime);
			start = Math.min(start, s);
			end = Math.max(end, e);
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

function fmt(n: number, digits = 2): string {
	return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

function machine(): string {
	const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
	return `${os.cpus().length} × ${cpu} (nproc ${os.availableParallelism()}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}`;
}

async function main(): Promise<void> {
	const log = (msg: string) =>
		console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
	log(
		`n8n ${VERSION}${QUICK ? ' (BENCH_QUICK: reduced item counts)' : ''}; load ${os
			.loadavg()
			.map((l) => l.toFixed(2))
			.join(' ')}`,
	);
	await ensureN8nInstalled([VERSION]);
	const tarball = await packPackage({ echo: false });
	log(`package ${path.basename(tarball)}`);

	const p1 = await startSandbox({ rateLimit: RATE, ...P1_LATENCY, seed: 1 });
	const p2 = await startSandbox({ ...P2_LATENCY, seed: 2 });
	const p3 = await startSandbox({ seed: 3 });
	const sandboxes = [p1, p2, p3];
	const home = await createN8nHome(VERSION, tarball);
	try {
		const credentials = sandboxes.flatMap((sb, i) => [
			{
				id: `credOurs0000000${i + 1}`,
				name: `credOurs0000000${i + 1}`,
				type: CREDENTIAL_TYPE,
				data: { baseUrl: sb.rootUrl, apiKey: sb.apiKey, allowHttp: true },
			},
			{
				id: `credHead0000000${i + 1}`,
				name: `credHead0000000${i + 1}`,
				type: 'httpHeaderAuth',
				data: { name: 'Authorization', value: `Bearer ${sb.apiKey}` },
			},
		]);
		const creds = (i: number) => ({
			ours: `credOurs0000000${i + 1}`,
			header: `credHead0000000${i + 1}`,
		});

		const scenarios: Scenario[] = [];
		const add = (
			id: string,
			scenario: Scenario['scenario'],
			label: string,
			kind: Kind,
			items: number,
			sbIndex: number,
			oursOptions?: Record<string, unknown>,
		) =>
			scenarios.push({
				id,
				scenario,
				label,
				kind,
				items,
				sandbox: sandboxes[sbIndex],
				workflow: buildWorkflow(id, kind, items, sandboxes[sbIndex], creds(sbIndex), oursOptions),
			});
		add('p1ours', 'P1', 'Invoice Service, defaults (concurrency 5)', 'ours', N_P1, 0);
		add('p1http', 'P1', 'HTTP Request 4.2, defaults', 'http', N_P1, 0);
		add('p1batch', 'P1', 'HTTP Request 4.2, batching 10 items / 200 ms', 'http-batching', N_P1, 0);
		add('p2ours10', 'P2', 'Invoice Service, concurrency 10', 'ours', N_P2, 1, { concurrency: 10 });
		add('p2loop', 'P2', 'Loop Over Items (batch 1) + HTTP Request 4.2', 'http-loop', N_P2, 1);
		add('p2ours50', 'P2', 'Invoice Service, concurrency 50', 'ours', N_P2, 1, { concurrency: 50 });
		add('p2http', 'P2', 'HTTP Request 4.2, defaults (all at once)', 'http', N_P2, 1);
		add('p3base', 'P3', 'baseline: only make the items', 'baseline', N_P3, 2);
		add('p3ours', 'P3', 'Invoice Service, defaults (concurrency 5)', 'ours', N_P3, 2);
		add('p3http', 'P3', 'HTTP Request 4.2, defaults', 'http', N_P3, 2);

		const importDir = fs.mkdtempSync(path.join(home.userFolder, 'import-'));
		fs.writeFileSync(path.join(importDir, 'credentials.json'), JSON.stringify(credentials));
		fs.writeFileSync(
			path.join(importDir, 'workflows.json'),
			JSON.stringify(scenarios.map((s) => ({ active: false, pinData: {}, ...s.workflow }))),
		);
		for (const [what, file] of [
			['import:credentials', 'credentials.json'],
			['import:workflow', 'workflows.json'],
		]) {
			const r = await n8n(home, [what, `--input=${path.join(importDir, file)}`]);
			if (r.code !== 0)
				throw new Error(`n8n ${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
			log(`${what} ${r.ms} ms`);
		}

		const measured: Measured[] = [];
		for (const scenario of scenarios) {
			if (ONLY.length && !ONLY.includes(scenario.id)) continue;
			scenario.sandbox.reset();
			const loadBefore = os.loadavg()[0];
			log(`${scenario.scenario} ${scenario.label}: ${scenario.items} items ...`);
			let exec = await execute(home, scenario.id, 30 * 60_000);
			let run = parseRawOutput(exec.stdout);
			if (!run) {
				// n8n occasionally dies before printing anything (seen here: exit 134 at start-up); run it once more
				log(
					`  no run data (exit ${exec.code}); running it again. stderr tail:\n${exec.stderr.slice(-800)}`,
				);
				scenario.sandbox.reset();
				exec = await execute(home, scenario.id, 30 * 60_000);
				run = parseRawOutput(exec.stdout);
			}
			if (!run) {
				throw new Error(
					`no run data for ${scenario.id} (exit ${exec.code}):\n${exec.stdout.slice(-3000)}\n${exec.stderr.slice(-3000)}`,
				);
			}
			const measuredNode = scenario.kind === 'baseline' ? SPLIT : TARGET;
			const outputs = itemsOf(run, measuredNode);
			const failures = outputs.filter((item) => item.json.error !== undefined);
			const stats = scenario.sandbox.stats();
			const m: Measured = {
				scenario,
				nodeMs: spanMs(run, scenario.kind === 'http-loop' ? [LOOP, TARGET] : [measuredNode]),
				successes: outputs.length - failures.length,
				failures: failures.length,
				firstError: failures[0] ? describeError(failures[0].json.error) : undefined,
				cpuS: exec.cpuS,
				peakMiB: exec.peakMiB,
				bootToExitMs: exec.ms,
				load: [loadBefore, os.loadavg()[0]],
				requests: stats.requests.total,
				rateLimited: stats.faults.rateLimited,
				records: stats.customers,
				maxInFlight: stats.concurrency.max,
			};
			if (exec.code !== 0 && scenario.kind !== 'baseline') {
				log(`  n8n exited ${exec.code}; stderr tail:\n${exec.stderr.slice(-1500)}`);
			}
			if (exec.code !== 0 && scenario.kind === 'baseline') {
				log(
					`  n8n exited ${exec.code} after printing the run data; stderr tail:\n${exec.stderr.slice(-1500)}`,
				);
			}
			if (scenario.kind !== 'baseline' && outputs.length !== scenario.items) {
				log(`  WARNING: ${outputs.length} output items for ${scenario.items} inputs`);
			}
			measured.push(m);
			log(
				`  exit ${exec.code}, node ${m.nodeMs} ms, ${m.successes} ok / ${m.failures} failed, cpu ${fmt(m.cpuS)} s, peak ${fmt(m.peakMiB, 0)} MiB, process ${exec.ms} ms, load ${fmt(m.load[0])} → ${fmt(m.load[1])}${m.firstError ? `; first error: ${m.firstError}` : ''}`,
			);
		}

		if (ONLY.length) {
			log('BENCH_ONLY: no table, bench/results.md left unchanged');
			return;
		}
		const report = render(measured);
		console.log(report);
		if (!QUICK) {
			fs.writeFileSync(RESULTS_FILE, report);
			log(`wrote ${path.relative(REPO_ROOT, RESULTS_FILE)}`);
		} else {
			log('BENCH_QUICK: bench/results.md left unchanged');
		}
	} finally {
		for (const sb of sandboxes) await sb.close();
		removeHome(home);
	}
}

function render(measured: Measured[]): string {
	const by = (id: string) => measured.find((m) => m.scenario.id === id)!;
	const throughput = (m: Measured) => m.successes / (m.nodeMs / 1000);
	const lines: string[] = [];
	const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
	lines.push(`# Benchmark: Invoice Service node vs HTTP Request node`);
	lines.push('');
	lines.push(
		`Generated by \`npm run bench\` (bench/run.ts) on ${now}${QUICK ? ' — BENCH_QUICK run, reduced item counts' : ''}.`,
	);
	lines.push('');
	lines.push(`- Machine: ${machine()}`);
	lines.push(
		`- n8n ${VERSION} (one user folder, every workflow imported once, each run = one \`n8n execute --id --rawOutput\`), Node.js ${process.version}`,
	);
	lines.push(
		`- n8n-nodes-invoice-service ${JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version as string} (packed from this tree, installed as a community package); HTTP Request node typeVersion 4.2 with a Header Auth credential`,
	);
	lines.push(
		"- Service: the local sandbox (sandbox/server.ts) on 127.0.0.1, in the benchmark process (its CPU is not counted as n8n's); reset before each run",
	);
	lines.push(
		'- Every workflow: Manual Trigger → Edit Fields (an expression builds the array of people) → Split Out → the node(s) measured, with "On Error: Continue" so every failure is an item',
	);
	lines.push('');
	lines.push(
		"Node time = from the start to the end of the measured node in n8n's run data (`startTime` + `executionTime`; for the loop, from the first start of Loop Over Items to the last end of it or the HTTP Request node). It excludes n8n's boot.",
	);
	lines.push('');

	const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
	const loadOf = (m: Measured) => `${fmt(m.load[0], 1)} → ${fmt(m.load[1], 1)}`;
	lines.push(
		'"load" = the machine\'s 1-minute load average when the run started → ended (2 cores: above 2, other work was competing with n8n for CPU, which slows the CPU-bound runs).',
	);
	lines.push('');
	// P1
	const p1 = ['p1ours', 'p1http', 'p1batch'].map(by);
	const p1BoundS = (N_P1 - RATE.burst) / RATE.perSecond;
	lines.push(
		`## P1: token bucket ${RATE.perSecond} req/s (burst ${RATE.burst}), latency ${P1_LATENCY.latencyMs} ± ${P1_LATENCY.jitterMs} ms, ${N_P1} creates`,
	);
	lines.push('');
	lines.push(
		`Bound set by the rate limit: (${N_P1} − ${RATE.burst} burst) ÷ ${RATE.perSecond}/s = ${fmt(p1BoundS, 1)} s. Target for ours: time ÷ bound ≤ 1.15 with 0 failures, untuned.`,
	);
	lines.push('');
	lines.push(
		row([
			'variant',
			'node time (s)',
			'successes',
			'failures',
			'time ÷ bound',
			'429 answers',
			'requests sent',
			'load',
		]),
	);
	lines.push(row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']));
	for (const m of p1) {
		lines.push(
			row([
				m.scenario.label,
				fmt(m.nodeMs / 1000),
				m.successes,
				m.failures,
				fmt(m.nodeMs / 1000 / p1BoundS),
				m.rateLimited,
				m.requests,
				loadOf(m),
			]),
		);
	}
	const [o1, , b1] = p1;
	lines.push('');
	lines.push(
		`Ours ÷ bound = **${fmt(o1.nodeMs / 1000 / p1BoundS)}** with ${o1.failures} failures (target ≤ 1.15, 0 failures: **${o1.nodeMs / 1000 / p1BoundS <= 1.15 && o1.failures === 0 ? 'met' : 'missed'}**); ours is ${fmt(b1.nodeMs / o1.nodeMs)}× as fast as hand-tuned batching.`,
	);
	lines.push('');

	// P2
	const meanLatencyS = P2_LATENCY.latencyMs / 1000;
	const boundTp = 10 / meanLatencyS;
	const [o10, loop, o50, http2] = ['p2ours10', 'p2loop', 'p2ours50', 'p2http'].map(by);
	lines.push(
		`## P2: no rate limit, latency ${P2_LATENCY.latencyMs - P2_LATENCY.jitterMs}–${P2_LATENCY.latencyMs + P2_LATENCY.jitterMs} ms (uniform, mean ${P2_LATENCY.latencyMs} ms), ${N_P2} creates`,
	);
	lines.push('');
	lines.push(`Bound for concurrency 10: 10 ÷ ${meanLatencyS} s = ${fmt(boundTp, 0)} items/s.`);
	lines.push('');
	lines.push(
		row([
			'variant',
			'node time (s)',
			'successes',
			'failures',
			'items/s',
			'max in flight at the service',
			'load',
		]),
	);
	lines.push(row(['---', '---:', '---:', '---:', '---:', '---:', '---:']));
	for (const m of [o10, loop, o50, http2]) {
		lines.push(
			row([
				m.scenario.label,
				fmt(m.nodeMs / 1000),
				m.successes,
				m.failures,
				fmt(throughput(m), 1),
				m.maxInFlight,
				loadOf(m),
			]),
		);
	}
	const r10 = throughput(o10) / boundTp;
	const rLoop = throughput(o10) / throughput(loop);
	const r50 = throughput(o50) / throughput(http2);
	lines.push('');
	lines.push(
		`- Ours at concurrency 10 ÷ bound = **${fmt(r10)}** (target ≥ 0.9: **${r10 >= 0.9 ? 'met' : 'missed'}**)`,
	);
	lines.push(
		`- Ours at concurrency 10 ÷ one at a time (Loop Over Items) = **${fmt(rLoop, 1)}×** (target ≥ 8×: **${rLoop >= 8 ? 'met' : 'missed'}**)`,
	);
	lines.push(
		`- Ours at concurrency 50 ÷ HTTP Request defaults = **${fmt(r50)}×** throughput (target ≥ 1.0: **${r50 >= 1 ? 'met' : 'missed'}**)`,
	);
	lines.push('');

	// P3
	const [base, o3, h3] = ['p3base', 'p3ours', 'p3http'].map(by);
	const perItemMs = (m: Measured) => ((m.cpuS - base.cpuS) * 1000) / N_P3;
	const cpuRatio = perItemMs(o3) / perItemMs(h3);
	lines.push(`## P3: no latency, no limit, ${N_P3} creates: CPU per item`);
	lines.push('');
	lines.push(
		'CPU = user + system seconds of the whole `n8n execute` process tree (bash `times` around the command: n8n and any child it started), minus the same for a baseline workflow that boots n8n and makes the same items without sending them; ÷ items. Peak memory = largest VmHWM (peak resident set) of the n8n process, sampled from /proc every 250 ms. The sandbox runs in the benchmark process, so its CPU is not in these figures. Node time ÷ items is shown too (wall time while n8n is CPU-bound).',
	);
	lines.push('');
	lines.push(
		row([
			'variant',
			'process CPU (s)',
			'CPU over baseline per item (ms)',
			'node time (s)',
			'node time per item (ms)',
			'successes',
			'failures',
			'peak memory (MiB)',
			'load',
		]),
	);
	lines.push(row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']));
	for (const m of [base, o3, h3]) {
		const isBase = m === base;
		lines.push(
			row([
				m.scenario.label,
				fmt(m.cpuS),
				isBase ? '—' : fmt(perItemMs(m), 3),
				isBase ? '—' : fmt(m.nodeMs / 1000),
				isBase ? '—' : fmt(m.nodeMs / N_P3, 3),
				isBase ? '—' : m.successes,
				isBase ? '—' : m.failures,
				fmt(m.peakMiB, 0),
				loadOf(m),
			]),
		);
	}
	lines.push('');
	lines.push(
		`CPU per item, ours ÷ HTTP Request = **${fmt(cpuRatio)}** (target ≤ 1.0: **${cpuRatio <= 1 ? 'met' : 'missed'}**).`,
	);
	lines.push('');
	return `${lines.join('\n')}\n`;
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
