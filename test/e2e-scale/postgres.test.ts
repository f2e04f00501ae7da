// The PostgreSQL starter (test/support/postgres.ts) that the queue-mode test and the storm benchmark use:
// a real server per call, reachable over TCP with the password it hands out (as n8n connects), an empty
// database owned by a role that is not a superuser, and nothing left behind after close().
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';

import { postgresBinDir, startPostgres, type Postgres } from '../support/postgres';

const execFileAsync = promisify(execFile);

/** psql over TCP to 127.0.0.1, as n8n connects: needs the right password. */
async function tcpQuery(pg: Postgres, password: string, sql: string): Promise<string> {
	const { stdout } = await execFileAsync(
		path.join(postgresBinDir(), 'psql'),
		['-h', pg.host, '-p', String(pg.port), '-U', pg.user, '-d', pg.database, '-XqAt', '-c', sql],
		{ env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '10' } },
	);
	return stdout.trim();
}

const listening = (port: number) =>
	new Promise<boolean>((resolve) => {
		const sock = net.createConnection({ host: '127.0.0.1', port });
		sock.once('connect', () => {
			sock.destroy();
			resolve(true);
		});
		sock.once('error', () => resolve(false));
	});

describe('startPostgres: a throw-away PostgreSQL server with an empty database', () => {
	let a: Postgres | undefined;
	let b: Postgres | undefined;

	afterAll(async () => {
		await Promise.allSettled([a?.close(), b?.close()]);
	});

	test('two calls: two servers, each with its own empty database, password login over TCP', async () => {
		[a, b] = await Promise.all([startPostgres(), startPostgres()]);
		expect(a.port).not.toBe(b.port);
		expect(a.env).toEqual({
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(a.port),
			DB_POSTGRESDB_DATABASE: a.database,
			DB_POSTGRESDB_USER: a.user,
			DB_POSTGRESDB_PASSWORD: a.password,
		});
		for (const pg of [a, b]) {
			// Empty: no table in any schema but the system's.
			expect(
				await tcpQuery(
					pg,
					pg.password,
					"SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
				),
			).toBe('0');
			// The login owns its database (n8n creates its tables there) but is not a superuser.
			expect(
				await tcpQuery(
					pg,
					pg.password,
					'SELECT current_user, rolsuper, pg_get_userbyid(datdba) FROM pg_roles, pg_database WHERE rolname = current_user AND datname = current_database()',
				),
			).toBe(`${pg.user}|f|${pg.user}`);
		}
		// Separate servers: a table made in one is not in the other.
		await a.query('CREATE TABLE marker (x int)');
		expect(await tcpQuery(a, a.password, "SELECT to_regclass('marker') IS NOT NULL")).toBe('t');
		expect(await tcpQuery(b, b.password, "SELECT to_regclass('marker') IS NOT NULL")).toBe('f');
	});

	test('over TCP a wrong password is refused', async () => {
		await expect(tcpQuery(a!, `${a!.password}x`, 'SELECT 1')).rejects.toThrow(
			/password authentication failed/,
		);
	});

	test('close() stops the server and removes its dir (data and socket)', async () => {
		const pg = await startPostgres();
		expect(await listening(pg.port)).toBe(true);
		expect(fs.existsSync(path.join(pg.dir, 'data', 'PG_VERSION'))).toBe(true);
		await pg.close();
		expect(await listening(pg.port)).toBe(false);
		expect(fs.existsSync(pg.dir)).toBe(false);
	});
});
