/* eslint-disable @n8n/community-nodes/no-restricted-globals, no-console */
// `npm run sandbox -- --port 8787 --style bubble ...`: runs the sandbox until SIGINT/SIGTERM.
import { runCli } from './run';

runCli(process.argv.slice(2), process.env, {
	log: (l) => console.log(l),
	error: (l) => console.error(l),
}).then(
	(running) => {
		if (typeof running === 'number') {
			process.exitCode = running;
			return;
		}
		const onSignal = (signal: NodeJS.Signals) =>
			running.stop(signal).then(
				() => process.exit(0),
				() => process.exit(1),
			);
		process.on('SIGINT', onSignal);
		process.on('SIGTERM', onSignal);
	},
	(err: unknown) => {
		console.error(`sandbox: ${err instanceof Error ? err.message : String(err)}`);
		process.exit(1);
	},
);
