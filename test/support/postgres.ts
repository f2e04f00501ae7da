// PostgreSQL for the queue-mode test and the storm benchmark: Debian's server binaries (installed by
// scripts/install-postgres.sh when missing), a throw-away cluster per call (initdb into a temp dir), listening
// on a free 127.0.0.1 port and on a unix socket in that dir, with one empty database owned by a password
// login that is not a superuser (as n8n's own docker-compose examples set it up).
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

import { READY_LIMIT_MS, freePort, startProcess, type ProcessHandle } from '../../tools/n8n';
import { systemProgram } from './system-program';

const execFileAsync = promisify(execFile);

export interface Postgres {
	port: number;
	host: '127.0.0.1';
	user: string;
	password: string;
	database: string;
	/** n8n's settings for this database: DB_TYPE=postgresdb and DB_POSTGRESDB_HOST/PORT/DATABASE/USER/PASSWORD. */
	env: Record<string, string>;
	/** Runs SQL in the database as its owner (psql, unaligned, no headers) and returns what psql printed. */
	query(sql: string): Promise<string>;
	/** Its temp dir: the cluster (data/) and the unix socket; removed by close(). */
	dir: string;
	/** The server's log so far. */
	output(): string;
	/**
	 * Freezes every PostgreSQL process (SIGSTOP to its process group): connections stay open and nothing answers,
	 * as a database host that hangs. `resume()` lets them run on (SIGCONT).
	 */
	pause(): void;
	resume(): void;
	/** Stops the server (fast shutdown: open sessions are ended) and removes its data dir. */
	close(): Promise<void>;
}

/** Debian's PostgreSQL binaries, /usr/lib/postgresql/<newest version>/bin; installs the package when missing. */
export function postgresBinDir(): string {
	return systemProgram(
		'PostgreSQL (initdb, postgres)',
		() => {
			const root = '/usr/lib/postgresql';
			const versions = fs.existsSync(root)
				? fs
						.readdirSync(root)
						.filter((v) =>
							['initdb', 'postgres', 'psql'].every((b) =>
								fs.existsSync(path.join(root, v, 'bin', b)),
							),
						)
						.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
				: [];
			return versions.length ? path.join(root, versions[0], 'bin') : undefined;
		},
		'install-postgres.sh',
	);
}

/** The user the server runs as: initdb and postgres refuse root, so as root they run as Debian's `postgres`. */
function serverUser(): { uid: number; gid: number } | undefined {
	if (os.userInfo().uid !== 0) return undefined;
	const id = (flag: string) => {
		const r = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
		if (r.status !== 0)
			throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as');
		return Number(r.stdout.trim());
	};
	return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts a PostgreSQL server of its own (a fresh cluster in a temp dir, a free loopback port) with one empty
 * database, and waits until it accepts connections. Durability is off (fsync, synchronous_commit): the data
 * is thrown away at close(), and the tests should not wait on this machine's disk.
 */
export async function startPostgres(): Promise<Postgres> {
	const bin = postgresBinDir();
	const as = serverUser();
	const port = await freePort();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-pg-'));
	const dataDir = path.join(dir, 'data');
	const user = 'n8n';
	const database = 'n8n';
	// Random per server: the test never prints it, and nothing else can log in with a guess.
	const password = randomBytes(12).toString('hex');
	let server: ProcessHandle | undefined;
	const spawnOpts = { cwd: dir, uid: as?.uid, gid: as?.gid };
	// Only the superuser's socket login is trusted (the socket sits in the 0700 dir); over TCP, as n8n
	// connects, a password is needed.
	const psql = async (db: string, role: string, sql: string) =>
		(
			await execFileAsync(
				path.join(bin, 'psql'),
				['-h', dir, '-p', String(port), '-U', role, '-d', db, '-X', '-q', '-A', '-t'].concat([
					'-v',
					'ON_ERROR_STOP=1',
					'-c',
					sql,
				]),
				{ ...spawnOpts, env: { ...process.env, PGPASSWORD: password, PGHOST: '', PGPORT: '' } },
			)
		).stdout.trim();

	try {
		if (as) fs.chownSync(dir, as.uid, as.gid);
		const init = spawnSync(
			path.join(bin, 'initdb'),
			['-D', dataDir, '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--auth-local=trust'].concat([
				'--auth-host=scram-sha-256',
				'--no-sync',
			]),
			{ ...spawnOpts, encoding: 'utf8', timeout: 120_000 },
		);
		if (init.status !== 0)
			throw new Error(`initdb failed (exit ${init.status}):\n${init.stdout}\n${init.stderr}`);

		server = startProcess(
			path.join(bin, 'postgres'),
			['-D', dataDir, '-p', String(port), '-k', dir].concat(
				[
					'listen_addresses=127.0.0.1',
					'fsync=off',
					'synchronous_commit=off',
					'full_page_writes=off',
				]
					.map((c) => ['-c', c])
					.flat(),
			),
			spawnOpts,
		);
		await server.waitFor(/database system is ready to accept connections/, READY_LIMIT_MS);

		await psql(
			'postgres',
			'postgres',
			`CREATE ROLE ${user} LOGIN PASSWORD '${password}' NOSUPERUSER NOCREATEDB NOCREATEROLE`,
		);
		await psql('postgres', 'postgres', `CREATE DATABASE ${database} OWNER ${user}`);
	} catch (error) {
		await stopServer(server);
		fs.rmSync(dir, { recursive: true, force: true });
		throw error;
	}

	const started = server;
	return {
		port,
		host: '127.0.0.1',
		user,
		password,
		database,
		env: {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(port),
			DB_POSTGRESDB_DATABASE: database,
			DB_POSTGRESDB_USER: user,
			DB_POSTGRESDB_PASSWORD: password,
		},
		dir,
		query: (sql) => psql(database, user, sql),
		output: () => started.output(),
		pause: () => signalGroup(started, 'SIGSTOP'),
		resume: () => signalGroup(started, 'SIGCONT'),
		async close() {
			// A paused server would never see the shutdown.
			signalGroup(started, 'SIGCONT');
			await stopServer(started);
			fs.rmSync(dir, { recursive: true, force: true });
		},
	};
}

/** A signal to the server and every backend it forked (its own process group). */
function signalGroup(server: ProcessHandle, signal: NodeJS.Signals): void {
	if (server.exited() || server.child.pid === undefined) return;
	process.kill(-server.child.pid, signal);
}

/** Fast shutdown (SIGINT: ends open sessions, unlike SIGTERM's "smart" wait for them), then the usual stop. */
async function stopServer(server: ProcessHandle | undefined): Promise<void> {
	if (!server || server.exited() || server.child.pid === undefined) return;
	const exit = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
	try {
		process.kill(-server.child.pid, 'SIGINT');
	} catch {
		return;
	}
	const timeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
	await Promise.race([exit, timeout]);
	await server.stop();
}
