// The service's workflow endpoints (POST {prefix}create-customer, create-invoice): the fault plan applied in
// the documented order, then authentication, the body checks and the operation from the table below.
import type * as http from 'node:http';
import {
	ENDLESS_CAP_BYTES,
	ENDLESS_CAP_MS,
	HTML_FILLER_START,
	HttpError,
	jsonAnswer,
	readBody,
	streamFiller,
} from './http-io';
import type { ServiceContext } from './service-context';
import type { Outcome, RecordStore } from './store';

export const API_PREFIXES = ['/api/1.1/wf/', '/version-test/api/1.1/wf/'];

type Operation = (store: RecordStore, body: unknown) => Outcome | Promise<Outcome>;

/** Every operation the service has; any other name under an API prefix is a 404. */
const OPERATIONS = new Map<string, Operation>([
	['create-customer', (store, body) => store.createCustomer(body)],
	['create-invoice', (store, body) => store.createInvoice(body)],
]);

const HTML_502 =
	'<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
	'<hr><center>sandbox-proxy</center>\r\n</body>\r\n</html>\r\n';

/** A status and a body already in the configured style. */
interface Reply {
	status: number;
	body: unknown;
}

export class Operations {
	constructor(private readonly context: ServiceContext) {}

	/** The operation named by a path under an API prefix, or a 404/405. */
	async handle(req: http.IncomingMessage, res: http.ServerResponse, name: string): Promise<void> {
		const operation = OPERATIONS.get(name);
		if (!operation) {
			this.context.responder.error(res, 404, `Workflow not found: ${name || '(empty)'}`);
			return;
		}
		if (req.method !== 'POST') {
			const message = `Method ${req.method} not allowed on ${name}; use POST`;
			this.context.responder.error(res, 405, message, { Allow: 'POST' });
			return;
		}
		const leave = this.context.counters.enterCreate();
		try {
			await this.run(operation, req, res);
		} finally {
			leave();
		}
	}

	private async run(
		operation: Operation,
		req: http.IncomingMessage,
		res: http.ServerResponse,
	): Promise<void> {
		// Draw first, so the fault and jitter sequences depend only on the order of create-* requests.
		const { fault: drawn, latencyMs } = this.context.plan.drawForCreate();
		const faults = this.context.counters.current.faults;
		const raw = await readBody(req).catch((err: unknown) =>
			err instanceof HttpError ? err : Promise.reject(err),
		);
		if (raw instanceof HttpError) {
			this.context.responder.error(res, raw.status, raw.message, { Connection: 'close' });
			return;
		}
		// A fault armed for this very request (faultOnce) replaces the drawn one; the draw is spent all the same.
		const fault = this.context.plan.takeOnce(raw.toString('utf8')) ?? drawn;
		if (!this.tokenTaken(res)) return;
		if (fault === 'resetBefore') {
			faults.resetBefore++;
			this.context.responder.reset(req);
			return;
		}
		await this.context.wait(latencyMs);
		if (fault === 'http500') {
			faults.http500++;
			const message = 'Internal server error (injected fault; nothing was processed)';
			this.context.responder.json(res, 500, { status: 'error', message });
			return;
		}
		if (fault === 'refuse') {
			faults.refused++;
			const message = 'Refused (injected one-shot fault; nothing was processed)';
			this.context.responder.error(res, 400, message);
			return;
		}
		if (fault === 'html502') {
			faults.html502++;
			const headers = { 'Content-Type': 'text/html' };
			this.context.responder.send(res, { status: 502, body: HTML_502, headers });
			return;
		}
		if (fault === 'slow') {
			faults.slow++;
			await this.context.wait(this.context.options().slowMs);
		}

		const reply = await this.process(operation, req, raw);
		if (fault === 'resetAfter') {
			faults.resetAfter++;
			this.context.responder.reset(req);
			return;
		}
		if (fault === 'endlessPage') {
			faults.endlessPage++;
			this.context.responder.startStream(res, 200, { 'Content-Type': 'text/html' });
			const onCap = () => this.context.responder.cut(req.socket);
			streamFiller(res, ENDLESS_CAP_BYTES, { ms: ENDLESS_CAP_MS, onCap }, HTML_FILLER_START);
			return;
		}
		const headers = reply.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
		const answer = jsonAnswer(reply.status, reply.body, headers);
		if (fault === 'trickle') faults.trickle++;
		this.context.responder.send(res, answer, fault === 'trickle');
	}

	/** Takes a rate-limit token, or answers 429 and says so. */
	private tokenTaken(res: http.ServerResponse): boolean {
		const token = this.context.plan.takeToken();
		if (token.ok) return true;
		this.context.counters.current.faults.rateLimited++;
		const { perSecond, burst } = this.context.plan.rateLimit()!;
		const retryAfter = token.retryAfterSeconds;
		const message = `Rate limit exceeded (${perSecond} requests per second, burst ${burst}); retry after ${retryAfter} s`;
		this.context.responder.json(
			res,
			429,
			{ status: 'error', message },
			{ 'Retry-After': String(retryAfter) },
		);
		return false;
	}

	private authorized(req: http.IncomingMessage): boolean {
		const header = req.headers.authorization;
		if (typeof header !== 'string') return false;
		const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
		const known = bearer !== null && this.context.options().apiKeys.includes(bearer[1]);
		return known && this.context.plan.keyStillValid();
	}

	/** Authentication, then the body checks, then the operation itself. */
	private async process(
		operation: Operation,
		req: http.IncomingMessage,
		raw: Buffer,
	): Promise<Reply> {
		const { responder } = this.context;
		const failure = (status: number, message: string): Reply => ({
			status,
			body: responder.errorBody(status, message),
		});
		if (!this.authorized(req)) {
			return failure(
				401,
				req.headers.authorization === undefined
					? 'Missing API key: send the header Authorization: Bearer <API_KEY>'
					: 'Invalid or expired API token',
			);
		}
		const contentType = String(req.headers['content-type'] ?? '');
		if (raw.length === 0) return failure(400, 'The request body is empty; expected a JSON object');
		if (contentType !== '' && !/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
			return failure(
				400,
				`Unsupported Content-Type "${contentType}": send the body as application/json`,
			);
		}
		let body: unknown;
		try {
			body = JSON.parse(raw.toString('utf8'));
		} catch (err) {
			return failure(400, `Invalid JSON in the request body: ${(err as Error).message}`);
		}
		const outcome = await operation(this.context.store, body);
		return outcome.status === 200
			? { status: 200, body: responder.successBody(outcome.fields) }
			: failure(outcome.status, outcome.message);
	}
}
