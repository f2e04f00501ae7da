// Processes read from /proc: a process tree, its peak memory and its CPU time.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

/** Every process below `root` (children, grandchildren, ...), from each process's parent in /proc/<pid>/stat. */
export function descendants(root: number): number[] {
	const parents = new Map<number, number>();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			parents.set(Number(entry), Number(afterName[1]));
		} catch {
			// the process ended meanwhile
		}
	}
	const found: number[] = [];
	const queue = [root];
	while (queue.length) {
		const pid = queue.shift()!;
		for (const [child, parent] of parents) {
			if (parent === pid) {
				found.push(child);
				queue.push(child);
			}
		}
	}
	return found;
}

export function readProc(pid: number, file: string): string {
	try {
		return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
	} catch {
		return '';
	}
}

export function vmHwmKiB(pid: number): number {
	return Number(/VmHWM:\s+(\d+)/.exec(readProc(pid, 'status'))?.[1] ?? 0);
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
	ticksPerSecond ??=
		Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
	return ticksPerSecond;
}

/**
 * CPU seconds (user + system) used so far by `root` and every process below it, counting also the children
 * they have already waited for (cutime/cstime: e.g. a task runner that was restarted). A process that ended
 * without being waited for between two readings is missed, which is why callers read a tree that lives on.
 */
export function treeCpuSeconds(root: number): number {
	let ticks = 0;
	for (const pid of [root, ...descendants(root)]) {
		const stat = readProc(pid, 'stat');
		if (!stat) continue;
		// Fields after "(name) ": state is field 3, utime 14, stime 15, cutime 16, cstime 17.
		const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
	}
	return ticks / clockTicks();
}
