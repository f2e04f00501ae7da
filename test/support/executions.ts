// A running n8n's executions through its REST API, as the editor sees them: saved credentials and published
// workflows (no CLI boot each), the executions a webhook started, an execution's saved run data, and the
// executions list's Retry button (`POST /rest/executions/:id/retry`). Used by the exactly-once suites.
import { sleep } from 'n8n-workflow';

import { CREDENTIAL_TYPE, waitForWebhook, type N8nServer, type RunData } from '../../tools/n8n';

/**
 * One execution as n8n saved it: its status, mode, what it retried, and its run data (unflattened, in the shape
 * `n8n execute --rawOutput` prints, so tools/n8n's readers apply).
 */
export interface SavedExecution {
	id: string;
	status: string;
	mode: string;
	retryOf?: string | null;
	run: RunData;
}

const FINISHED = new Set(['success', 'error', 'crashed', 'canceled']);

/**
 * n8n saves an execution's data as "flatted" JSON (circular references allowed): one array whose first entry is
 * the root, where every object and string is replaced by the index (as a string) of its entry.
 */
export function unflatten(text: string): unknown {
	const table = JSON.parse(text) as unknown[];
	const revived = new Set<object>();
	const resolve = (index: string): unknown => {
		const value = table[Number(index)];
		if (value && typeof value === 'object' && !revived.has(value)) {
			revived.add(value);
			const record = value as Record<string, unknown>;
			for (const key of Object.keys(record)) {
				if (typeof record[key] === 'string') record[key] = resolve(record[key]);
			}
		}
		return value;
	};
	return resolve('0');
}

async function mustRest(
	server: N8nServer,
	method: string,
	route: string,
	body?: unknown,
): Promise<unknown> {
	const r = await server.rest(method, route, body);
	if (r.status !== 200)
		throw new Error(`${method} /rest${route}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
	return r.body;
}

/** Saves an Invoice Service credential for a service (the sandbox) and returns how workflows refer to it. */
export async function saveCredential(
	server: N8nServer,
	name: string,
	service: { rootUrl: string; apiKey: string },
): Promise<{ id: string; name: string }> {
	const saved = (await mustRest(server, 'POST', '/credentials', {
		name,
		type: CREDENTIAL_TYPE,
		data: { baseUrl: service.rootUrl, apiKey: service.apiKey, allowHttp: true },
	})) as { id: string };
	return { id: saved.id, name };
}

type Workflow = {
	nodes: Array<{ type: string; parameters: Record<string, unknown>; webhookId?: string }>;
};

/** The production URL and method of a trigger n8n serves over HTTP (a Webhook, a Form Trigger), if it is one. */
function triggerUrl(
	server: N8nServer,
	{ type, parameters, webhookId }: Workflow['nodes'][number],
): { url: string; method: string } | undefined {
	if (type === 'n8n-nodes-base.webhook')
		return {
			url: `${server.url}/webhook/${String(parameters.path)}`,
			method: String(parameters.httpMethod ?? 'GET'),
		};
	if (type === 'n8n-nodes-base.formTrigger') {
		// Form Trigger 2.2 and later keep the path in Options → Form Path; without one the form lives at its id.
		const options = (parameters.options ?? {}) as { path?: string };
		return { url: `${server.url}/form/${options.path ?? webhookId}`, method: 'POST' };
	}
	return undefined;
}

/**
 * Saves workflows and publishes them as the editor does (`POST /workflows/:id/activate` with the version to
 * publish, in 1.123 and 2.x alike), then waits until every Webhook node's production URL
 * answers, and every Form Trigger's form (2.x registers them some seconds after publishing, all together). Returns
 * the workflows' ids.
 */
export async function publishWorkflows(
	server: N8nServer,
	workflows: Workflow[],
): Promise<string[]> {
	const ids: string[] = [];
	for (const workflow of workflows) {
		const saved = (await mustRest(server, 'POST', '/workflows', {
			active: false,
			settings: { executionOrder: 'v1' },
			...workflow,
		})) as { id: string; versionId: string };
		await mustRest(server, 'POST', `/workflows/${saved.id}/activate`, {
			versionId: saved.versionId,
		});
		ids.push(saved.id);
	}
	for (const node of workflows.flatMap((workflow) => workflow.nodes)) {
		const trigger = triggerUrl(server, node);
		if (trigger) await waitForWebhook(trigger.url, trigger.method);
	}
	return ids;
}

/**
 * Edits a saved workflow as the editor's Save does (`PATCH /rest/workflows/:id`): `change` edits its nodes in
 * place. A published workflow keeps running its published version; *Retry with currently saved workflow* uses
 * the saved one.
 */
export async function saveWorkflowNodes(
	server: N8nServer,
	workflowId: string,
	change: (nodes: Array<{ name: string; parameters: Record<string, unknown> }>) => void,
): Promise<void> {
	const saved = (await mustRest(server, 'GET', `/workflows/${workflowId}`)) as {
		versionId: string;
		nodes: Array<{ name: string; parameters: Record<string, unknown> }>;
	};
	change(saved.nodes);
	await mustRest(server, 'PATCH', `/workflows/${workflowId}`, {
		versionId: saved.versionId,
		nodes: saved.nodes,
	});
}

/**
 * The ids of a workflow's executions, each once. n8n 1.x lists the running executions and the finished ones in
 * two queries at once and joins them: one that finishes in between is in both.
 */
export async function executionIds(server: N8nServer, workflowId: string): Promise<string[]> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const list = (await mustRest(server, 'GET', `/executions?filter=${filter}&limit=100`)) as {
		results: Array<{ id: string }>;
	};
	return [...new Set(list.results.map((execution) => String(execution.id)))];
}

/** An execution once it has finished (polls while it is new, running or waiting to be saved). */
export async function finishedExecution(
	server: N8nServer,
	id: string,
	timeoutMs = 60_000,
): Promise<SavedExecution> {
	for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
		const r = await server.rest('GET', `/executions/${id}`);
		const saved = r.body as Partial<SavedExecution> & { data?: unknown };
		const data = typeof saved.data === 'string' ? unflatten(saved.data) : saved.data;
		// n8n 1.123 on SQLite writes the status and the run data in two statements: a reader in between sees the
		// final status with the data saved at the start (no node has run). The final data names its last node.
		const complete =
			(data as RunData['data'] | undefined)?.resultData?.lastNodeExecuted !== undefined;
		if (r.status === 200 && saved.status && FINISHED.has(saved.status) && complete) {
			return {
				id: String(saved.id ?? id),
				status: saved.status,
				mode: String(saved.mode),
				retryOf: saved.retryOf,
				run: { status: saved.status, mode: saved.mode, data } as RunData,
			};
		}
		if (Date.now() > deadline)
			throw new Error(`execution ${id} not finished after ${timeoutMs} ms: ${JSON.stringify(r)}`);
	}
}

/**
 * Runs `send` (which starts executions of the workflow, e.g. by webhook calls) and returns the executions it
 * started, oldest first, once each has finished. `count` is how many to wait for.
 */
export async function executionsStartedBy(
	server: N8nServer,
	workflowId: string,
	send: () => Promise<unknown>,
	count = 1,
	timeoutMs = 60_000,
): Promise<SavedExecution[]> {
	const before = new Set(await executionIds(server, workflowId));
	await send();
	for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
		const started = (await executionIds(server, workflowId)).filter((id) => !before.has(id));
		if (started.length >= count) {
			started.sort((a, b) => Number(a) - Number(b));
			return await Promise.all(started.map((id) => finishedExecution(server, id, timeoutMs)));
		}
		if (Date.now() > deadline)
			throw new Error(`${started.length} of ${count} executions started after ${timeoutMs} ms`);
	}
}

/**
 * The executions list's Retry button: "Retry with original workflow" (`loadWorkflow: false`) or "with currently
 * saved workflow" (true). n8n answers once the retry has finished, with the new execution's id.
 */
export async function retryExecution(
	server: N8nServer,
	id: string,
	loadWorkflow: boolean,
): Promise<SavedExecution> {
	const answer = (await mustRest(server, 'POST', `/executions/${id}/retry`, { loadWorkflow })) as {
		id: string;
	};
	return await finishedExecution(server, String(answer.id));
}

/** Posts JSON to a production webhook of the server; returns the HTTP status. */
export async function postWebhook(server: N8nServer, path: string, body: unknown): Promise<number> {
	const res = await fetch(`${server.url}/webhook/${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
		signal: AbortSignal.timeout(120_000),
	});
	await res.arrayBuffer();
	return res.status;
}
