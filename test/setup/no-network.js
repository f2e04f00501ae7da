// Unit and workflow tests never reach a network: every request must be intercepted by nock.
const nock = require('nock');
nock.disableNetConnect();
