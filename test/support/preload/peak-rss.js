// Loaded into n8n with NODE_OPTIONS=--require=<this file> by the real-n8n tests that measure memory. When the
// `n8n execute` process exits, it writes two lines on stderr:
// - `[peak-rss] <KiB>`: the process's peak resident memory (the kernel's maxrss), n8n's start included;
// - `[run-rss-growth] <bytes>`: how far the resident memory rose above what it was when the first request to the
//   service (a path under /api/1.1/wf/) was started, sampled every 2 ms until the exit. This leaves out n8n's
//   start, whose peak moves by 20-40 MiB from one process to the next (bimodal on n8n 1.123.81).
// Child processes that inherit NODE_OPTIONS (n8n 2.x's task runner) stay silent.
'use strict';
if (process.argv.includes('execute')) {
	const diagnostics = require('node:diagnostics_channel');
	let atFirstRequest;
	let peak = 0;
	const sample = () => {
		peak = Math.max(peak, process.memoryUsage.rss());
	};
	diagnostics.subscribe('http.client.request.start', ({ request }) => {
		if (atFirstRequest !== undefined || !String(request.path).includes('/api/1.1/wf/')) return;
		atFirstRequest = process.memoryUsage.rss();
		peak = atFirstRequest;
		setInterval(sample, 2).unref();
	});
	process.on('exit', () => {
		const { maxRSS } = process.resourceUsage();
		let lines = `\n[peak-rss] ${maxRSS}\n`;
		if (atFirstRequest !== undefined) {
			sample();
			lines += `[run-rss-growth] ${peak - atFirstRequest}\n`;
		}
		require('node:fs').writeSync(2, lines);
	});
}
