// Unit and workflow tests never reach a network: every request must be intercepted by nock.
const nock = require('nock');

if (!nock.isActive()) nock.activate();
nock.disableNetConnect();

// Each test file loads its own copy of nock (jest's module registry), but the interceptor it installs on
// node's http module is process-wide. Release it after every file, or the next file's nock is never consulted.
afterAll(() => {
	nock.cleanAll();
	nock.enableNetConnect();
	nock.restore();
});
