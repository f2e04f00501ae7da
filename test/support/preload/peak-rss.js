// Loaded into n8n with NODE_OPTIONS=--require=<this file> by the real-n8n tests that measure memory: when the
// `n8n execute` process exits, it writes its peak resident memory (the kernel's maxrss) as one line on stderr.
// Child processes that inherit NODE_OPTIONS (n8n 2.x's task runner) stay silent.
'use strict';
if (process.argv.includes('execute')) {
	process.on('exit', () => {
		const { maxRSS } = process.resourceUsage();
		require('node:fs').writeSync(2, `\n[peak-rss] ${maxRSS}\n`);
	});
}
