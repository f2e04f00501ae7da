/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
// Import credentials and workflows into an n8n home with the CLI, then publish (activate) workflows, so a
// later `n8n start` registers their production webhooks. Shared by the MCP (test/e2e-mcp) and queue-mode
// (test/e2e-scale) tests.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { n8n, type CredentialImport, type N8nHome, type ProcResult } from '.';

function must(what: string, r: ProcResult): ProcResult {
	if (r.code !== 0) {
		throw new Error(
			`n8n ${what} failed (exit ${r.code}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`,
		);
	}
	return r;
}

/**
 * `import:credentials`, `import:workflow`, then per workflow `publish:workflow --id=<id>` (n8n 2.x; the 1.x
 * `update:workflow --id=<id> --active=true` still exists in 2.41 but only forwards to publish with a
 * deprecation warning). Each command is one n8n boot. Returns the time each took.
 */
export async function importAndPublish(
	home: N8nHome,
	input: {
		credentials: CredentialImport[];
		workflows: Array<Record<string, unknown>>;
		env?: NodeJS.ProcessEnv;
	},
): Promise<Record<string, number>> {
	const ms: Record<string, number> = {};
	const dir = fs.mkdtempSync(path.join(home.userFolder, 'import-'));
	const credFile = path.join(dir, 'credentials.json');
	fs.writeFileSync(credFile, JSON.stringify(input.credentials, null, 2));
	ms.importCredentials = must(
		'import:credentials',
		await n8n(home, ['import:credentials', `--input=${credFile}`], { env: input.env }),
	).ms;
	const wfFile = path.join(dir, 'workflows.json');
	fs.writeFileSync(
		wfFile,
		JSON.stringify(
			input.workflows.map((wf) => ({ active: false, settings: {}, pinData: {}, ...wf })),
			null,
			2,
		),
	);
	ms.importWorkflows = must(
		'import:workflow',
		await n8n(home, ['import:workflow', `--input=${wfFile}`], { env: input.env }),
	).ms;
	for (const wf of input.workflows) {
		const id = String(wf.id);
		const major = Number(home.version.split('.')[0]);
		const args =
			major >= 2
				? ['publish:workflow', `--id=${id}`]
				: ['update:workflow', `--id=${id}`, '--active=true'];
		const r = must(args[0], await n8n(home, args, { env: input.env }));
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

/**
 * `n8n start` answers its REST API before the published workflows' production webhooks are registered: in
 * 2.41 the workflow publication service (N8N_USE_WORKFLOW_PUBLICATION_SERVICE, on by default) activates them
 * asynchronously after boot (outbox poll every 15 s, reconciliation every 10 s) and logs nothing at info
 * level; until then the URL answers 404 "not registered". Probe it the way a browser's CORS preflight does:
 * `OPTIONS <url>` with an Origin answers 204 and `Access-Control-Allow-Methods` naming the webhook's methods
 * once it is registered, without running the workflow.
 */
export async function waitForWebhook(
	url: string,
	method: string,
	timeoutMs = 90_000,
): Promise<number> {
	const started = Date.now();
	let last = '';
	for (;;) {
		try {
			const res = await fetch(url, {
				method: 'OPTIONS',
				headers: { origin: 'http://127.0.0.1', 'access-control-request-method': method },
				signal: AbortSignal.timeout(10_000),
			});
			const allowed = res.headers.get('access-control-allow-methods') ?? '';
			last = `HTTP ${res.status} allow=${allowed} ${(await res.text()).slice(0, 300)}`;
			if (res.status === 204 && allowed.split(/,\s*/).includes(method)) return Date.now() - started;
		} catch (e) {
			last = String(e);
		}
		if (Date.now() - started > timeoutMs) {
			throw new Error(
				`webhook ${method} ${url} not registered after ${timeoutMs} ms; last answer: ${last}`,
			);
		}
		await new Promise((r) => setTimeout(r, 500));
	}
}
