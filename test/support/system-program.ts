// Programs from Debian packages that the real-n8n tests start themselves (redis-server, PostgreSQL): find them,
// and on a fresh machine install the package once with the project's idempotent script (root or sudo).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

import { REPO_ROOT } from '../../tools/n8n';

/** Where a command is on PATH, or undefined. */
export function onPath(command: string): string | undefined {
	const r = spawnSync('bash', ['-c', `command -v ${command}`], { encoding: 'utf8' });
	return r.stdout.trim() || undefined;
}

/**
 * What `find` finds; when it finds nothing, runs `scripts/<installScript>` (idempotent: apt-get through
 * scripts/apt-install.sh) and looks again. Throws with the script's output when the program is still missing.
 */
export function systemProgram<T>(
	what: string,
	find: () => T | undefined,
	installScript: string,
): T {
	const found = find();
	if (found !== undefined) return found;
	const script = path.join(REPO_ROOT, 'scripts', installScript);
	const r = spawnSync('bash', [script], { encoding: 'utf8', timeout: 10 * 60_000 });
	const again = find();
	if (again === undefined)
		throw new Error(
			`${what} is missing and scripts/${installScript} failed:\n${r.stdout}\n${r.stderr}`,
		);
	return again;
}
