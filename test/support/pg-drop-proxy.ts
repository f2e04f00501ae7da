// A TCP proxy in front of PostgreSQL that can drop one connection right after a write committed: the server
// has done the write, the client (an n8n worker) sees "Connection terminated" instead of the answer. That is
// the real failure "the store failed after its commit" (a network cut or a restarted pooler at the wrong
// moment), made deterministic. It can instead freeze that connection there (the answer never comes: a process
// stuck right after its write, e.g. to be killed at that point). Passes everything through untouched until
// armed. One listening port per client process (`ports`), so a fault says which process it hit.
import * as net from 'node:net';

/** Where an armed fault fell: the index of the listening port (in `ports`) the connection came in on. */
export interface Hit {
	listener: number;
}

export interface DropProxy {
	/** The first listening port (`ports[0]`). */
	port: number;
	/** One listening port per client process, all to the same server. */
	ports: number[];
	/**
	 * Arms the proxy: the next connection whose client sends a message containing `marker` is dropped at the
	 * first ReadyForQuery with status idle (no transaction open: the statement committed) that follows it,
	 * instead of passing that answer on. Resolves once dropped.
	 */
	dropAfterCommit(marker: string): Promise<Hit>;
	/** As dropAfterCommit, but the connection is kept open and that answer (and all after it) held back. */
	freezeAfterCommit(marker: string): Promise<Hit>;
	/** Forgets an armed fault that has not fallen (its promise never resolves). */
	disarm(): void;
	close(): Promise<void>;
}

/** PostgreSQL's SSLRequest code: the server answers it with one bare byte, not a typed message. */
const SSL_REQUEST = 80877103;
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I'

interface Armed {
	marker: Buffer;
	freeze: boolean;
	hit: (hit: Hit) => void;
}

export async function startDropProxy(targetPort: number, listeners = 1): Promise<DropProxy> {
	let armed: Armed | undefined;
	const sockets = new Set<net.Socket>();
	const relay = (listener: number) => (client: net.Socket) => {
		const upstream = net.connect(targetPort, '127.0.0.1');
		for (const socket of [client, upstream]) {
			sockets.add(socket);
			socket.on('close', () => sockets.delete(socket));
			socket.on('error', () => undefined);
		}
		client.on('close', () => upstream.destroy());
		upstream.on('close', () => client.destroy());
		// This connection's turn to be dropped or frozen (its client sent the marker).
		let target: Armed | undefined;
		let frozen = false;
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
		// The server's answers, message by message (type byte, int32 length), so the fault falls exactly there.
		let carry = Buffer.alloc(0);
		upstream.on('data', (chunk: Buffer) => {
			if (frozen) return;
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
					if (target.freeze) frozen = true;
					else {
						client.destroy();
						upstream.destroy();
					}
					target.hit({ listener });
					return;
				}
				at = end;
			}
			if (at > 0) client.write(buf.subarray(0, at));
			carry = buf.subarray(at);
		});
	};
	const servers = Array.from({ length: listeners }, (_, i) => net.createServer(relay(i)));
	await Promise.all(
		servers.map(
			async (server) =>
				await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
		),
	);
	const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
	const arm = async (marker: string, freeze: boolean) =>
		await new Promise<Hit>((hit) => {
			armed = { marker: Buffer.from(marker), freeze, hit };
		});
	return {
		port: ports[0],
		ports,
		dropAfterCommit: async (marker) => await arm(marker, false),
		freezeAfterCommit: async (marker) => await arm(marker, true),
		disarm: () => (armed = undefined),
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await Promise.all(
				servers.map(
					async (server) => await new Promise<void>((resolve) => server.close(() => resolve())),
				),
			);
		},
	};
}
