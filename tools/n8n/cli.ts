// n8n's command line for a home: import credentials and workflows, run workflows headlessly
// (`n8n execute --id=<id> --rawOutput`), publish (activate) workflows for a later `n8n start`.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { expectSuccess, run, type ProcResult } from './process';
import { n8nBin } from './install';
import { CREDENTIAL_TYPE } from './project';
import { parseRawOutput, type RunData } from './run-data';
import { n8nEnv, type N8nHome } from './user-folder';

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

/** An Invoice Service credential for a service on loopback (the sandbox): its root URL and key, plain HTTP. */
export function invoiceServiceCredential(
	credential: { id: string; name: string },
	service: { rootUrl: string; apiKey: string },
): CredentialImport {
	return {
		...credential,
		type: CREDENTIAL_TYPE,
		data: { baseUrl: service.rootUrl, apiKey: service.apiKey, allowHttp: true },
	};
}

/** What goes into an n8n home: credentials (plaintext), workflows (ids of 1..16 characters). */
export interface N8nImport {
	credentials?: CredentialImport[];
	workflows: Array<Record<string, unknown>>;
	/** Extra environment for the n8n commands. */
	env?: NodeJS.ProcessEnv;
	log?: (msg: string) => void;
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
 * Imports credentials (when there are any) and workflows into a home: one `import:credentials` and one
 * `import:workflow` boot. The one way the tests, the demo and the bench put things into n8n. Workflows get
 * `active: false`, empty `settings` and `pinData` unless they set their own. Returns how long each import took.
 */
export async function importIntoN8n(
	home: N8nHome,
	input: N8nImport,
): Promise<{ credentialsMs: number; workflowsMs: number }> {
	checkWorkflowIds(input.workflows);
	const importDir = fs.mkdtempSync(path.join(home.userFolder, 'import-'));
	const importFile = async (command: string, fileName: string, content: unknown) => {
		const file = path.join(importDir, fileName);
		fs.writeFileSync(file, JSON.stringify(content, null, 2));
		const r = await n8n(home, [command, `--input=${file}`], { env: input.env });
		expectSuccess(`n8n ${command}`, r);
		input.log?.(`${command} ${r.ms} ms`);
		return r.ms;
	};
	const credentialsMs = input.credentials?.length
		? await importFile('import:credentials', 'credentials.json', input.credentials)
		: 0;
	const workflowsMs = await importFile(
		'import:workflow',
		'workflows.json',
		input.workflows.map((wf) => ({ active: false, settings: {}, pinData: {}, ...wf })),
	);
	return { credentialsMs, workflowsMs };
}

/**
 * Imports credentials and workflows into the home (`importIntoN8n`), then runs each workflow with
 * `n8n execute --id=<id> --rawOutput` (one boot each) and returns the parsed run data per workflow id.
 */
export async function runWorkflows(home: N8nHome, input: N8nImport): Promise<RunWorkflowsResult> {
	const started = Date.now();
	const log = input.log ?? (() => undefined);
	await importIntoN8n(home, { ...input, log });
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

/**
 * Imports (`importIntoN8n`), then per workflow `publish:workflow --id=<id>` (n8n 2.x; the 1.x
 * `update:workflow --id=<id> --active=true` still exists in 2.41 but only forwards to publish with a
 * deprecation warning), so a later `n8n start` registers their production webhooks. Each command is one n8n
 * boot. Returns the time each took.
 */
export async function importAndPublish(
	home: N8nHome,
	input: N8nImport,
): Promise<Record<string, number>> {
	const imported = await importIntoN8n(home, input);
	const ms: Record<string, number> = {
		importCredentials: imported.credentialsMs,
		importWorkflows: imported.workflowsMs,
	};
	for (const wf of input.workflows) {
		const id = String(wf.id);
		const major = Number(home.version.split('.')[0]);
		const args =
			major >= 2
				? ['publish:workflow', `--id=${id}`]
				: ['update:workflow', `--id=${id}`, '--active=true'];
		const r = expectSuccess(`n8n ${args[0]}`, await n8n(home, args, { env: input.env }));
		// Both commands log failures and still exit 0 on some errors: insist on the success line.
		const out = `${r.stdout}\n${r.stderr}`;
		if (
			!/Publishing workflow with ID|Activating workflow with ID/.test(out) ||
			/Error|Failed/i.test(out.replace(/Please restart n8n[^\n]*/g, ''))
		) {
			throw new Error(`n8n ${args.join(' ')} did not report success:\n${out.slice(-4000)}`);
		}
		ms[`publish ${id}`] = r.ms;
	}
	return ms;
}
