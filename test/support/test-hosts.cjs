// Preloaded into a real n8n (NODE_OPTIONS="--require <this file>", in that process's environment only): host
// names ending in ".test" (the test domain RFC 2606 and 6761 reserve, never a real host) resolve to 127.0.0.1, so a test
// service on this machine can be reached by a name the node counts as another host. Nothing else changes: no
// /etc/hosts edit, no real address, every other name resolved as before.
//
// n8n's HTTP client (axios over Node's http/https; n8n 2.x's @n8n/backend-network too while SSRF protection is
// off) resolves names with Node's dns.lookup, which net.connect reads from the dns module at each connection;
// n8n 2.x's SSRF-protecting resolver uses dns.promises.lookup. Both are answered here.
'use strict';
const dns = require('node:dns');

const TEST_NAME = /\.test\.?$/i;
const ADDRESS = '127.0.0.1';
/** Each lookup answered here, so a test can tell the mapping was used (written to stderr, which tests keep). */
const note = (hostname) => process.stderr.write(`[test-hosts] ${hostname} -> ${ADDRESS}\n`);

function answer(options) {
	const all = typeof options === 'object' && options !== null && options.all === true;
	return all ? [{ address: ADDRESS, family: 4 }] : { address: ADDRESS, family: 4 };
}

const lookup = dns.lookup;
dns.lookup = function lookupWithTestNames(hostname, options, callback) {
	if (typeof hostname !== 'string' || !TEST_NAME.test(hostname)) {
		return lookup.apply(this, arguments);
	}
	const done = typeof options === 'function' ? options : callback;
	const found = answer(typeof options === 'function' ? {} : options);
	note(hostname);
	process.nextTick(() =>
		Array.isArray(found) ? done(null, found) : done(null, found.address, found.family),
	);
	return {};
};

const promisesLookup = dns.promises.lookup;
dns.promises.lookup = async function lookupWithTestNames(hostname, options) {
	if (typeof hostname !== 'string' || !TEST_NAME.test(hostname)) {
		return await promisesLookup.call(this, hostname, options);
	}
	note(hostname);
	return answer(options);
};
