// n8n as a server, for what only its REST API and webhooks offer (the credential "Test" button, published
// workflows' webhooks).
import { NODE24, READY_LIMIT_MS, freePort, startProcess, type ProcessHandle } from './process';
import { n8nBin } from './install';
import { n8nEnv, type N8nHome } from './user-folder';

export interface N8nServer {
	url: string;
	/** The process started for it (a wrapper shell; n8n and its task runner are below it). */
	pid: number;
	/** How long the server took to answer its first REST call. */
	bootMs: number;
	/** A REST call as the owner (after `setupOwner`), JSON in and out; `data` unwrapped when present. */
	rest(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
	/** Creates the instance owner and keeps its session cookie for `rest`. */
	setupOwner(): Promise<void>;
	/** Signs in as the owner `setupOwner` created (e.g. after a restart on the same user folder). */
	login(): Promise<void>;
	output(): string;
	stop(): Promise<void>;
}

const BROWSER_ID = 'n8n-nodes-invoice-service-e2e';
/** The instance owner of every test server (a throw-away local instance); the browser test signs in as it. */
export const N8N_OWNER = { email: 'owner@example.com', password: 'E2e-owner-pw-1' };

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

	const limitMs = opts.timeoutMs ?? READY_LIMIT_MS;
	const deadline = started + limitMs;
	for (;;) {
		if (proc.exited())
			throw new Error(`n8n start exited before it was ready:\n${proc.output().slice(-4000)}`);
		if (Date.now() > deadline) {
			await stop();
			throw new Error(
				`n8n start did not answer on ${url} within ${limitMs} ms:\n${proc.output().slice(-4000)}`,
			);
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
		pid: proc.child.pid!,
		bootMs,
		rest,
		output: proc.output,
		stop,
		async setupOwner() {
			const r = await rest('POST', '/owner/setup', {
				...N8N_OWNER,
				firstName: 'E2E',
				lastName: 'Owner',
			});
			if (r.status !== 200 || !cookie) {
				throw new Error(`owner setup failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
			}
		},
		async login() {
			const r = await rest('POST', '/login', {
				emailOrLdapLoginId: N8N_OWNER.email,
				password: N8N_OWNER.password,
			});
			if (r.status !== 200 || !cookie) {
				throw new Error(`login failed: HTTP ${r.status} ${JSON.stringify(r.body)}`);
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
	timeoutMs = READY_LIMIT_MS,
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

/**
 * Starts `n8n worker --concurrency=<n>` (queue mode) for a home, with its own task-runner broker port, and
 * waits until it says it is ready. `env` carries the queue-mode settings (EXECUTIONS_MODE, Redis, database).
 */
export async function startN8nWorker(
	home: N8nHome,
	opts: { env: NodeJS.ProcessEnv; concurrency: number; timeoutMs?: number },
): Promise<ProcessHandle> {
	const worker = startProcess(
		'bash',
		[NODE24, n8nBin(home.version), 'worker', `--concurrency=${opts.concurrency}`],
		{
			cwd: home.userFolder,
			env: n8nEnv(home, { ...opts.env, N8N_RUNNERS_BROKER_PORT: String(await freePort()) }),
		},
	);
	try {
		await worker.waitFor(
			/n8n worker is now ready[\s\S]* \* Concurrency: \d+/,
			opts.timeoutMs ?? READY_LIMIT_MS,
		);
	} catch (error) {
		await worker.stop();
		throw error;
	}
	return worker;
}
