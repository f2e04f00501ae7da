// The order of `npm test`'s files: the in-process projects first (they need no n8n install), then the ones that run
// a real n8n, and the resilience suites last. So CI (.ci/run) installs n8n in the background while the in-process
// tests run, and a real-n8n suite that starts before the install finished waits for it (scripts/install-n8n.sh: one
// install at a time, flock). The resilience suites measure rates, times and memory: beside an install (2 busy
// cores) they failed (a rate limit never reached, 35 % 429s, +239 MB), so they run once the installs are over.
// Within a group, jest's own order (failed first, then slowest).
const Sequencer = require('@jest/test-sequencer').default;

const IN_PROCESS = ['unit', 'workflow', 'release', 'sandbox'];
const LAST = ['resilience'];

class InProcessFirst extends Sequencer {
	sort(tests) {
		const sorted = super.sort(tests);
		const group = (test) => {
			const project = test.context.config.displayName?.name;
			if (IN_PROCESS.includes(project)) return 0;
			return LAST.includes(project) ? 2 : 1;
		};
		// Array.prototype.sort is stable: jest's order holds within each group.
		return [...sorted].sort((a, b) => group(a) - group(b));
	}
}

module.exports = InProcessFirst;
