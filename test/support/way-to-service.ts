// Real local servers for the tests of the way from n8n to the service (issue 43): redirects, certificates,
// refused ports, hosts that do not exist, secrets in the Base URL. Each server records every request it got,
// so a test shows what the service (or a redirect's target) received: nothing, where nothing may be sent.
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const API = '/api/1.1/wf';
export const WAY_KEY = 'way-key-4e1b8f';

/** The certificates of test/fixtures/tls (make.sh says what each one is). */
export type Certificate = 'leaf' | 'self' | 'expired' | 'other';
export const TLS_DIR = join(__dirname, '..', 'fixtures', 'tls');
export const CA_FILE = join(TLS_DIR, 'ca.pem');

export interface Received {
	method: string;
	url: string;
	authorization?: string;
	body: string;
}

/** What the server answers a request with; by default a created customer. */
export type Answer = (request: Received) => {
	status: number;
	headers?: Record<string, string>;
	body?: unknown;
};

export interface RecordingServer {
	/** The server's origin, `http(s)://127.0.0.1:<port>`. */
	origin: string;
	/** Every request the server got, in order. */
	received: Received[];
	/** TCP connections the server accepted (a request that never came still connected first). */
	connections: () => number;
	close(): Promise<void>;
}

let customers = 0;
export const createdCustomer: Answer = ({ body }) => {
	const sent = JSON.parse(body || '{}') as Record<string, string>;
	customers++;
	return {
		status: 200,
		body: {
			status: 'success',
			response: {
				id: `cust_${customers}`,
				name: `${sent.first_name} ${sent.last_name}`,
				email: sent.email,
			},
		},
	};
};

/** Starts a server on a free loopback port, plain http or https with one of the fixture certificates. */
export async function startRecordingServer(
	answer: Answer = createdCustomer,
	{ certificate }: { certificate?: Certificate } = {},
): Promise<RecordingServer> {
	const received: Received[] = [];
	let connections = 0;
	const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const got: Received = {
				method: request.method ?? '',
				url: request.url ?? '',
				...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
				body: Buffer.concat(chunks).toString('utf8'),
			};
			received.push(got);
			const { status, headers = {}, body } = answer(got);
			const text = body === undefined ? '' : JSON.stringify(body);
			response.writeHead(status, {
				...(text ? { 'content-type': 'application/json' } : {}),
				...headers,
			});
			response.end(text);
		});
	};
	const server = certificate
		? https.createServer(
				{
					key: readFileSync(join(TLS_DIR, `${certificate}-key.pem`)),
					cert: readFileSync(join(TLS_DIR, `${certificate}.pem`)),
				},
				handler,
			)
		: http.createServer(handler);
	server.on('connection', () => connections++);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		origin: `${certificate ? 'https' : 'http'}://127.0.0.1:${port}`,
		received,
		connections: () => connections,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** A loopback port nothing listens on (taken, then let go). */
export async function refusedPort(): Promise<number> {
	const server = http.createServer();
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

/** A redirect answer to `target` (absolute, or a path on the same server). */
export const redirectTo =
	(status: number, target: string): Answer =>
	() => ({ status, headers: { location: target } });

export const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;
