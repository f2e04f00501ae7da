// A `n8n start` for the storms: a fresh home with the packed package, the storm workflows published.
import type { Sandbox } from '../../sandbox/server';
import {
	createN8nHome,
	importAndPublish,
	removeHome,
	startN8nServer,
	waitForWebhook,
} from '../../tools/n8n';
import { log } from '../measure';
import { credentialsFor } from '../workflows';
import { STORM_VERSION } from './plan';
import { stormWorkflow, webhookPath, type StormKind } from './workflows';

export interface StormServer {
	url: (kind: StormKind) => string;
	pid: number;
	/** n8n's folder (`database.sqlite` in it). */
	n8nDir: string;
	stop(): Promise<void>;
}

/** A `n8n start` with the storm workflows of `kinds` published; `stop` ends it and removes its home. */
export async function stormServer(
	sandbox: Sandbox,
	tarball: string,
	kinds: StormKind[],
	env: NodeJS.ProcessEnv = {},
): Promise<StormServer> {
	const home = await createN8nHome(STORM_VERSION, tarball);
	const { imports, ids } = credentialsFor([sandbox]);
	const workflowId = (kind: StormKind) => `storm${kind}`;
	await importAndPublish(home, {
		credentials: imports,
		workflows: kinds.map((kind) => stormWorkflow(workflowId(kind), kind, sandbox, ids[0])),
		env,
		log,
	});
	const server = await startN8nServer(home, { env, timeoutMs: 180_000 });
	const url = (kind: StormKind) => `${server.url}/webhook/${webhookPath(workflowId(kind))}`;
	for (const kind of kinds) await waitForWebhook(url(kind), 'POST');
	log(`n8n start ready in ${server.bootMs} ms (pid ${server.pid})`);
	return {
		url,
		pid: server.pid,
		n8nDir: home.n8nDir,
		async stop() {
			await server.stop();
			removeHome(home);
		},
	};
}
