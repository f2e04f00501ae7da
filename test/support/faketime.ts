// A process whose wall clock is off, as on another host: Debian's libfaketime (package `faketime`, installed by
// scripts/install-faketime.sh when missing) preloaded into it. Only the wall clock moves (Date.now(),
// new Date()); the monotonic clock (performance.now(), process.hrtime, timers) is left alone, as NTP drift
// leaves it. Measured on Node 24.21 (2026-11-27, measureClockOffset below): a child under FAKETIME=+0.300 / -0.300 /
// +3 / -3 had its Date.now() off by 300 / -300 / 3001 / -3000 ms and its process.hrtime in step with its parent's
// (off by 49-86 ms, within the 65-106 ms the child took to start).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { promisify } from 'node:util';

import { NODE24 } from '../../tools/n8n';
import { systemProgram } from './system-program';

const execFileAsync = promisify(execFile);

/** The multi-threaded library (Node runs threads): the single-threaded one is not safe there. */
export const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

/** The library's path; installs the package first when it is missing. */
export function faketimeLib(): string {
	return systemProgram(
		'libfaketime',
		() => (fs.existsSync(FAKETIME_LIB) ? FAKETIME_LIB : undefined),
		'install-faketime.sh',
	);
}

/** The environment that moves a process's wall clock by `offsetMs` (0: none, an empty environment). */
export function clockOffsetEnv(offsetMs: number): NodeJS.ProcessEnv {
	if (offsetMs === 0) return {};
	const seconds = (Math.abs(offsetMs) / 1000).toFixed(3);
	return {
		LD_PRELOAD: faketimeLib(),
		// A relative offset: the clock runs at its normal rate, this far ahead or behind.
		FAKETIME: `${offsetMs < 0 ? '-' : '+'}${seconds}`,
		FAKETIME_DONT_FAKE_MONOTONIC: '1',
	};
}

/**
 * Starts a Node 24 process (the way n8n is started: scripts/with-node24.sh) with `env`; it reads its wall clock
 * (Date.now) and its monotonic clock (process.hrtime) at one instant. Against this process's clocks, read just
 * before and after it: `shiftMs`, how far its wall clock is off its monotonic one (exact: both read at once), and
 * `monotonicMs`, how far its monotonic clock is off this one's (the midpoint's; within `errorMs`, half the time
 * the child took, if it is not moved).
 */
export async function measureClockOffset(
	env: NodeJS.ProcessEnv,
): Promise<{ shiftMs: number; monotonicMs: number; errorMs: number }> {
	const hrMs = () => Number(process.hrtime.bigint() / 1_000_000n);
	const wall0 = Date.now();
	const mono0 = hrMs();
	const { stdout } = await execFileAsync(
		'bash',
		[NODE24, 'node', '-e', 'console.log(Date.now(), String(process.hrtime.bigint() / 1000000n))'],
		{ env: { ...process.env, ...env } },
	);
	const wall1 = Date.now();
	const mono1 = hrMs();
	const [wall, mono] = stdout.trim().split(/\s+/).map(Number);
	// This process's wall and monotonic clocks agree (no preload here): the two midpoints are one instant.
	const wallOff = wall - (wall0 + wall1) / 2;
	const monoOff = mono - (mono0 + mono1) / 2;
	return {
		shiftMs: Math.round(wallOff - monoOff),
		monotonicMs: Math.round(monoOff),
		errorMs: Math.ceil((wall1 - wall0) / 2),
	};
}
