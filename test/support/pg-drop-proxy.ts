// A TCP proxy in front of PostgreSQL that can drop one connection right after a write committed: the server
// has done the write, the client (an n8n worker) sees "Connection terminated" instead of the answer. That is
// the real failure "the store failed after its commit" (a network cut or a restarted pooler at the wrong
// moment), made deterministic. Passes everything through untouched until armed.
import * as net from 'node:net';

export interface DropProxy {
	port: number;
	/**
	 * Arms the proxy: the next connection whose client sends a message containing `marker` is dropped at the
	 * first ReadyForQuery with status idle (no transaction open: the statement committed) that follows it,
	 * instead of passing that answer on. Resolves once dropped.
	 */
	dropAfterCommit(marker: string): Promise<void>;
	close(): Promise<void>;
}

/** PostgreSQL's SSLRequest code: the server answers it with one bare byte, not a typed message. */
const SSL_REQUEST = 80877103;
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I'

interface Armed {
	marker: Buffer;
	dropped: () => void;
}

export async function startDropProxy(targetPort: number): Promise<DropProxy> {
	let armed: Armed | undefined;
	const sockets = new Set<net.Socket>();
	const server = net.createServer((client) => {
		const upstream = net.connect(targetPort, '127.0.0.1');
		for (const socket of [client, upstream]) {
			sockets.add(socket);
			socket.on('close', () => sockets.delete(socket));
			socket.on('error', () => undefined);
		}
		client.on('close', () => upstream.destroy());
		upstream.on('close', () => client.destroy());
		// This connection's turn to be dropped (its client sent the marker).
		let target: Armed | undefined;
		let tail = Buffer.alloc(0);
		let sslAnswerPending = false;
		let firstClientChunk = true;
		client.on('data', (chunk: Buffer) => {
			if (firstClientChunk && chunk.length >= 8 && chunk.readInt32BE(4) === SSL_REQUEST)
				sslAnswerPending = true;
			firstClientChunk = false;
			if (armed && !target) {
				const seen = Buffer.concat([tail, chunk]);
				if (seen.includes(armed.marker)) {
					target = armed;
					armed = undefined;
				}
				tail = seen.subarray(Math.max(0, seen.length - 256));
			}
			upstream.write(chunk);
		});
		// The server's answers, message by message (type byte, int32 length), so the drop falls exactly there.
		let carry = Buffer.alloc(0);
		upstream.on('data', (chunk: Buffer) => {
			let buf = Buffer.concat([carry, chunk]);
			if (sslAnswerPending && buf.length > 0) {
				sslAnswerPending = false;
				client.write(buf.subarray(0, 1));
				buf = buf.subarray(1);
			}
			let at = 0;
			while (buf.length - at >= 5) {
				const end = at + 1 + buf.readInt32BE(at + 1);
				if (end > buf.length) break;
				if (target && buf[at] === READY_FOR_QUERY && buf[at + 5] === IDLE) {
					if (at > 0) client.write(buf.subarray(0, at));
					client.destroy();
					upstream.destroy();
					target.dropped();
					return;
				}
				at = end;
			}
			if (at > 0) client.write(buf.subarray(0, at));
			carry = buf.subarray(at);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		port: (server.address() as net.AddressInfo).port,
		dropAfterCommit: async (marker) =>
			await new Promise<void>((dropped) => {
				armed = { marker: Buffer.from(marker), dropped };
			}),
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
