// Redis for the queue-mode test: Debian's redis-server (installed by scripts/install-redis.sh when missing)
// on a free loopback port, no persistence, and one command at a time over RESP.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { READY_LIMIT_MS, freePort, startProcess, type ProcessHandle } from '../../tools/n8n';
import { onPath, systemProgram } from './system-program';

/** One Redis command over RESP on a fresh connection (enough for PING, GET, KEYS). */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
	return new Promise((resolve, reject) => {
		const sock = net.createConnection({ host: '127.0.0.1', port });
		let buf = '';
		sock.setTimeout(5000, () => sock.destroy(new Error('redis timeout')));
		sock.on('connect', () =>
			sock.write(
				`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`,
			),
		);
		sock.on('data', (d) => {
			buf += d.toString();
			const bulk = /^\$(\d+)\r\n/.exec(buf);
			if (
				(bulk && buf.length >= bulk[0].length + Number(bulk[1]) + 2) ||
				(!bulk && buf.endsWith('\r\n'))
			) {
				sock.end();
				resolve(bulk ? buf.slice(bulk[0].length, bulk[0].length + Number(bulk[1])) : buf.trim());
			}
		});
		sock.on('error', reject);
	});
}

/** The redis-server binary; on a fresh machine installs Debian's package first (needs root or sudo). */
export function redisServerBin(): string {
	return systemProgram('redis-server', () => onPath('redis-server'), 'install-redis.sh');
}

export interface RedisServer {
	port: number;
	/** Its own temp dir (the caller removes it). */
	dir: string;
	server: ProcessHandle;
}

/** Starts redis-server on a free loopback port, no RDB/AOF, in its own temp dir; waits until it is ready. */
export async function startRedis(bin: string): Promise<RedisServer> {
	const port = await freePort();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-e2e-redis-'));
	const server = startProcess(
		bin,
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--appendonly',
			'no',
			'--dir',
			dir,
			'--daemonize',
			'no',
		],
		{ cwd: dir },
	);
	try {
		await server.waitFor(/Ready to accept connections/, READY_LIMIT_MS);
	} catch (error) {
		await server.stop();
		fs.rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	return { port, dir, server };
}
