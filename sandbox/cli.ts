/* eslint-disable @n8n/community-nodes/no-restricted-globals, no-console */
// `npm run sandbox -- --port 8787 --style bubble ...`: runs the sandbox until SIGINT/SIGTERM.
import { parseCliConfig, usage } from './config';
import { startSandbox } from './server';

async function main(): Promise<void> {
	let options;
	try {
		options = parseCliConfig(process.argv.slice(2), process.env);
	} catch (err) {
		console.error(`sandbox: ${(err as Error).message}\n\n${usage()}`);
		process.exitCode = 2;
		return;
	}
	if (options.help) {
		console.log(usage());
		return;
	}
	delete options.help;
	// A stable default for people; startSandbox itself defaults to 0 (any free port) for tests.
	if (options.port === undefined) options.port = 8787;

	const sandbox = await startSandbox(options);
	const config = sandbox.config();
	console.log('Customer and Invoice Service sandbox');
	console.log(`  config:   ${JSON.stringify(config)}`);
	console.log(`  root URL: ${sandbox.rootUrl}`);
	console.log(`  base URL: ${sandbox.baseUrl}   (also ${sandbox.rootUrl}/version-test/api/1.1/wf)`);
	if (sandbox.pdfRootUrl !== sandbox.rootUrl) console.log(`  PDF host: ${sandbox.pdfRootUrl}`);
	console.log(`  API key:  ${sandbox.apiKey}`);
	console.log(`  outbox:   ${sandbox.outboxDir}`);
	console.log(`  admin:    GET ${sandbox.rootUrl}/__admin/stats, POST /__admin/reset, GET|POST /__admin/config, GET /__admin/records`);
	// One machine-readable line for scripts that start the sandbox as a child process.
	console.log(
		`SANDBOX_READY ${JSON.stringify({ rootUrl: sandbox.rootUrl, baseUrl: sandbox.baseUrl, pdfRootUrl: sandbox.pdfRootUrl, apiKey: sandbox.apiKey, outboxDir: sandbox.outboxDir })}`,
	);

	let stopping = false;
	const stop = (signal: string) => {
		if (stopping) return;
		stopping = true;
		const s = sandbox.stats();
		console.log(`sandbox: ${signal} received; closing (served ${s.requests.total} requests, ${s.customers} customers, ${s.invoices} invoices)`);
		sandbox.close().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.on('SIGINT', () => stop('SIGINT'));
	process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
	console.error(`sandbox: ${(err as Error).message ?? String(err)}`);
	process.exit(1);
});
