import type {
	Icon,
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';
import { UserError } from 'n8n-workflow';

import { readApiKey } from '../nodes/InvoiceService/helpers/apiKey';
import { addressProblem, baseUrlExpression } from '../nodes/InvoiceService/helpers/baseUrl';

// The Test request is declarative, so its URL can only be an n8n expression: it is written from the same steps
// the node uses (helpers/baseUrl.ts). A refused Base URL makes the expression throw; n8n's tester does not show
// that message (2.x reports "ERR_INVALID_URL", 1.x "Invalid URL"), but the Test fails before anything is sent.
const NORMALISED_BASE_URL = `={{ ${baseUrlExpression('$credentials.baseUrl')} }}`;

/** Statuses that make the Test button fail, with what the user should do about each. */
const TEST_FAILURES: Array<[number, string]> = [
	[401, 'The API key was rejected (HTTP 401): check the API key'],
	[403, 'The API key is not allowed to run the create-customer workflow (HTTP 403)'],
	[
		404,
		'Nothing found at this Base URL (HTTP 404): check the Base URL (the app address, optionally followed by /api/1.1/wf) and that the create-customer workflow is exposed as an API workflow',
	],
	[405, "The Base URL does not accept the service's requests (HTTP 405): check the Base URL"],
	// A redirect is never followed (as by the node): its rule cannot name the target, the node's error does.
	...[301, 302, 303, 307, 308].map((status): [number, string] => [
		status,
		`The Base URL answers with a redirect (HTTP ${status}): nothing was created or sent on. Set the Base URL to the address the service is at now (run the node once to see where the redirect points)`,
	]),
	[429, 'The service is rate limiting this key right now (HTTP 429): try again in a minute'],
	[500, 'The service had an error (HTTP 500): try again later'],
	[502, 'The service or a proxy in front of it is failing (HTTP 502): try again later'],
	[503, 'The service is unavailable (HTTP 503): try again later'],
	[504, 'The service did not answer in time (HTTP 504): try again later'],
];

export class InvoiceServiceApi implements ICredentialType {
	name = 'invoiceServiceApi';

	displayName = 'Invoice Service API';

	icon: Icon = { light: 'file:invoiceService.svg', dark: 'file:invoiceService.dark.svg' };

	documentationUrl =
		'https://www.npmjs.com/package/n8n-nodes-invoice-service#credentials-invoice-service-api';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://your-app.bubbleapps.io/api/1.1/wf',
			description:
				"The address of the service's workflow API. The app address alone works too (/api/1.1/wf is added), and so does a pasted create-customer or create-invoice endpoint URL. For the development version use https://your-app.bubbleapps.io/version-test.",
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				"The API key from the app's API settings. It carries full access to the account: keep it private.",
		},
		{
			displayName: 'Allow Plain HTTP',
			name: 'allowHttp',
			type: 'boolean',
			default: false,
			description:
				'Whether to allow a Base URL starting with http:// on a host other than this machine. Off by default: the API key would travel unencrypted. Localhost is always allowed.',
		},
	];

	// A function rather than the generic `=Bearer {{$credentials.apiKey}}` block: n8n calls it for every request
	// without evaluating an expression in its sandbox (bench/README.md: the A/B). The key is read as people paste
	// it (helpers/apiKey.ts): spaces, line breaks and a "Bearer " prefix are dropped, and a key that cannot
	// travel in a header is refused here, so the Test button shows the same message the node does. So is a
	// request to plain http on another host while "Allow Plain HTTP" is off, and one whose address carries a
	// user name or password (helpers/baseUrl.ts): the key is never attached to it, and n8n's tester shows this
	// sentence (an error in the Test's URL expression it does not show: test/e2e/credential-test.test.ts).
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const address = addressProblem(requestOptions, {
			allowHttp: credentials.allowHttp === true,
		});
		if (address) throw new UserError(address);
		const reading = readApiKey(credentials.apiKey);
		if ('problem' in reading) throw new UserError(reading.problem);
		return {
			...requestOptions,
			headers: { ...requestOptions.headers, Authorization: `Bearer ${reading.key}` },
		};
	}

	// The service has no read endpoint. The test sends create-customer an empty body: the service checks the
	// key first, so a valid key gets 400 (invalid input, nothing created) and a bad key gets 401.
	// n8n's tester sees the status only of a request that throws, so every status listed above is made to throw
	// and mapped to its message; 400 and 2xx pass. (n8n 1.x ignores the `except` list and accepts every
	// status, so there the Test button cannot tell a wrong key: the node still reports it clearly when it runs.)
	test: ICredentialTestRequest = {
		request: {
			baseURL: NORMALISED_BASE_URL,
			url: '/create-customer',
			method: 'POST',
			body: {},
			json: true,
			disableFollowRedirect: true,
			ignoreHttpStatusErrors: { ignore: true, except: TEST_FAILURES.map(([status]) => status) },
		},
		rules: TEST_FAILURES.map(([value, message]) => ({
			type: 'responseCode' as const,
			properties: { value, message },
		})),
	};
}
