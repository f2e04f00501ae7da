// The CLI's logic, separated from `process` so tests can drive it in-process: parse flags/env, start the
// sandbox, print the effective config, base URL and key, and close cleanly when told to stop.
import { parseCliConfig, usage } from './config';
import { startSandbox, type Sandbox } from './server';

export interface CliIo {
	log: (line: string) => void;
	error: (line: string) => void;
}

export interface RunningCli {
	sandbox: Sandbox;
	/** Closes the sandbox (idempotent); resolves when every listener is closed. */
	stop: (reason: string) => Promise<void>;
}

/** Returns the running sandbox, or an exit code when there is nothing to run (help, bad flags). */
export async function runCli(
	argv: string[],
	env: Record<string, string | undefined>,
	io: CliIo,
): Promise<RunningCli | number> {
	let options;
	try {
		options = parseCliConfig(argv, env);
	} catch (err) {
		io.error(`sandbox: ${(err as Error).message}\n\n${usage()}`);
		return 2;
	}
	if (options.help) {
		io.log(usage());
		return 0;
	}
	delete options.help;
	// A stable default for people; startSandbox itself defaults to 0 (any free port) for tests.
	if (options.port === undefined) options.port = 8787;

	const sandbox = await startSandbox(options);
	io.log('Customer and Invoice Service sandbox');
	io.log(`  config:   ${JSON.stringify(sandbox.config())}`);
	io.log(`  root URL: ${sandbox.rootUrl}`);
	io.log(`  base URL: ${sandbox.baseUrl}   (also ${sandbox.rootUrl}/version-test/api/1.1/wf)`);
	if (sandbox.pdfRootUrl !== sandbox.rootUrl) io.log(`  PDF host: ${sandbox.pdfRootUrl}`);
	io.log(`  API key:  ${sandbox.apiKey}`);
	io.log(`  outbox:   ${sandbox.outboxDir}`);
	io.log(
		`  admin:    GET ${sandbox.rootUrl}/__admin/stats, POST /__admin/reset, GET|POST /__admin/config, GET /__admin/records`,
	);
	// One machine-readable line for scripts that start the sandbox as a child process.
	io.log(
		`SANDBOX_READY ${JSON.stringify({ rootUrl: sandbox.rootUrl, baseUrl: sandbox.baseUrl, pdfRootUrl: sandbox.pdfRootUrl, apiKey: sandbox.apiKey, outboxDir: sandbox.outboxDir })}`,
	);

	let stopping: Promise<void> | undefined;
	const stop = (reason: string) => {
		if (!stopping) {
			const s = sandbox.stats();
			io.log(
				`sandbox: ${reason} received; closing (served ${s.requests.total} requests, ${s.customers} customers, ${s.invoices} invoices)`,
			);
			stopping = sandbox.close();
		}
		return stopping;
	};
	return { sandbox, stop };
}
