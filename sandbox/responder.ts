// How the service answers on the wire: bodies in the configured style (plain or Bubble), every status
// counted, and the sockets it cuts on purpose (so a cut is not mistaken for a client that left).
import type * as http from 'node:http';
import type { Socket } from 'node:net';
import { destroySocket, jsonAnswer, writeTrickled, writeWhole, type Answer } from './http-io';
import type { SandboxOptions } from './options';
import type { Counters } from './stats';

/** Bubble's error kinds by status; other statuses keep the plain shape in both styles. */
const BUBBLE_ERROR_KINDS: Record<number, string> = {
	400: 'ERROR',
	404: 'NOT_FOUND',
	405: 'ERROR',
	413: 'TOO_LARGE',
};

export class Responder {
	private readonly cutOnPurpose = new WeakSet<Socket>();

	constructor(
		private readonly counters: Counters,
		private readonly options: () => SandboxOptions,
	) {}

	/** Error body in the configured style. */
	errorBody(status: number, message: string): unknown {
		if (this.options().style === 'bubble') {
			if (status === 401) {
				return {
					error_class: 'Unauthorized',
					args: { code: 'sandbox' },
					translation: message,
					message,
				};
			}
			const kind = BUBBLE_ERROR_KINDS[status];
			if (kind !== undefined) return { statusCode: status, body: { status: kind, message } };
		}
		return { status: 'error', message };
	}

	successBody(fields: Record<string, unknown>): unknown {
		return this.options().style === 'bubble' ? { status: 'success', response: fields } : fields;
	}

	/** The whole answer at once, or (trickled) status and headers at once and the body over trickleMs. */
	send(res: http.ServerResponse, answer: Answer, trickled = false): void {
		this.counters.countStatus(answer.status);
		if (trickled) writeTrickled(res, answer, this.options().trickleMs);
		else writeWhole(res, answer);
	}

	json(res: http.ServerResponse, status: number, body: unknown, headers = {}): void {
		this.send(res, jsonAnswer(status, body, headers));
	}

	/** An error in the configured style. */
	error(res: http.ServerResponse, status: number, message: string, headers = {}): void {
		this.json(res, status, this.errorBody(status, message), headers);
	}

	/** Headers only, for a body the caller streams. */
	startStream(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders): void {
		this.counters.countStatus(status);
		res.writeHead(status, headers);
	}

	/** The reset faults: counted as `reset`, the socket cut instead of an answer. */
	reset(req: http.IncomingMessage): void {
		this.counters.countStatus('reset');
		this.cut(req.socket);
	}

	cut(socket: Socket): void {
		this.cutOnPurpose.add(socket);
		destroySocket(socket);
	}

	wasCutOnPurpose(socket: Socket): boolean {
		return this.cutOnPurpose.has(socket);
	}
}
