// Command-line flags and SANDBOX_* environment variables → SandboxStartOptions. Flags win over env.
import type { FaultKind, SandboxStartOptions } from './options';

export type CliOptions = SandboxStartOptions & { help?: boolean };
type Parsed = CliOptions & { ratePerSecond?: number; rateBurst?: number };

interface Setting {
	flag: string;
	env: string;
	help: string;
	apply: (parsed: Parsed, value: string) => void;
}

type NumericKey =
	| 'port'
	| 'latencyMs'
	| 'jitterMs'
	| 'ratePerSecond'
	| 'rateBurst'
	| 'slowMs'
	| 'trickleMs'
	| 'pdfOversizeBytes'
	| 'revokeKeysAfter'
	| 'seed';

interface Limits {
	min?: number;
	max?: number;
	integer?: boolean;
}

function parseNumber(
	flag: string,
	value: string,
	{ min = 0, max = Infinity, integer = false }: Limits = {},
): number {
	const number = Number(value);
	if (
		value.trim() === '' ||
		!Number.isFinite(number) ||
		number < min ||
		number > max ||
		(integer && !Number.isInteger(number))
	) {
		const kind = integer ? 'an integer' : 'a number';
		throw new Error(`${flag} must be ${kind} between ${min} and ${max}, got "${value}"`);
	}
	return number;
}

/** A setting whose environment variable is SANDBOX_ + the flag's name (`--slow-ms` → SANDBOX_SLOW_MS). */
function setting(flag: string, help: string, apply: Setting['apply']): Setting {
	const env = `SANDBOX_${flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
	return { flag, env, help, apply };
}

function numeric(flag: string, key: NumericKey, help: string, limits?: Limits): Setting {
	return setting(flag, help, (parsed, value) => {
		parsed[key] = parseNumber(flag, value, limits);
	});
}

/** One of `choices` (each mapped to its option value). */
function choice<Value>(
	flag: string,
	choices: Record<string, Value>,
	help: string,
	set: (parsed: Parsed, value: Value) => void,
): Setting {
	return setting(flag, help, (parsed, value) => {
		const names = Object.keys(choices);
		if (!names.includes(value)) {
			const listed = `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
			throw new Error(`${flag} must be ${listed}, got "${value}"`);
		}
		set(parsed, choices[value]);
	});
}

function fault(kind: FaultKind, flag: string): Setting {
	return setting(
		flag,
		`rate 0..1 of create-* requests answered with the ${kind} fault`,
		(parsed, value) => {
			parsed.faults = { ...parsed.faults, [kind]: parseNumber(flag, value, { max: 1 }) };
		},
	);
}

export const SETTINGS: Setting[] = [
	numeric('--port', 'port', 'port to listen on (0 = any free port; default 8787)', {
		max: 65535,
		integer: true,
	}),
	setting('--host', 'interface to listen on (default 127.0.0.1)', (parsed, value) => {
		parsed.host = value;
	}),
	choice(
		'--style',
		{ plain: 'plain', bubble: 'bubble' } as const,
		'plain | bubble (bubble wraps success as {status:"success",response} and uses Bubble error shapes)',
		(parsed, style) => (parsed.style = style),
	),
	numeric('--latency', 'latencyMs', 'fixed latency per answer in ms'),
	numeric('--jitter', 'jitterMs', 'uniform jitter ± ms around the latency'),
	numeric('--rate', 'ratePerSecond', 'token bucket refill per second for create-* (0 = no limit)'),
	numeric('--burst', 'rateBurst', 'token bucket size (default = rate)', { min: 1 }),
	fault('http500', '--fault-500'),
	fault('html502', '--fault-502'),
	fault('resetBefore', '--fault-reset-before'),
	fault('resetAfter', '--fault-reset-after'),
	fault('slow', '--fault-slow'),
	fault('trickle', '--fault-trickle'),
	fault('endlessPage', '--fault-endless-page'),
	numeric('--slow-ms', 'slowMs', 'how long a "slow" fault waits (default 30000)'),
	numeric(
		'--trickle-ms',
		'trickleMs',
		'how long a trickled body takes (create-* trickle fault, PDF trickle; default 120000)',
	),
	choice(
		'--pdf-fault',
		{ trickle: 'trickle', oversized: 'oversized', endless: 'endless', none: null } as const,
		'trickle | oversized | endless | none: what every GET of a PDF does',
		(parsed, pdfFault) => (parsed.pdfFault = pdfFault),
	),
	numeric(
		'--revoke-keys-after',
		'revokeKeysAfter',
		'the keys stop working after this many create-* requests (a key revoked mid-run)',
		{ integer: true },
	),
	numeric(
		'--pdf-oversize-bytes',
		'pdfOversizeBytes',
		'size of the oversized PDF fault (default 67108864 = 64 MiB)',
		{ min: 1, integer: true },
	),
	choice(
		'--pdf-origin',
		{ same: 'same', other: 'other' } as const,
		'same | other (other = PDFs served by a second listener on another port)',
		(parsed, origin) => (parsed.pdfOrigin = origin),
	),
	setting(
		'--outbox',
		'directory for the .eml files of send_email (default: a temp dir)',
		(parsed, value) => {
			parsed.outboxDir = value;
		},
	),
	setting(
		'--key',
		'accepted API key; repeat the flag or separate with commas for several (default sandbox-key-1234)',
		(parsed, value) => {
			const keys = value
				.split(',')
				.map((key) => key.trim())
				.filter((key) => key !== '');
			if (keys.length === 0) throw new Error('--key must not be empty');
			parsed.apiKeys = [...(parsed.apiKeys ?? []), ...keys];
		},
	),
	numeric('--seed', 'seed', 'seed for deterministic fault and jitter draws', {
		min: -Infinity,
		integer: true,
	}),
];

export function usage(): string {
	const lines = SETTINGS.map(
		({ flag, env, help }) => `  ${(flag + ' <v>').padEnd(26)} ${env.padEnd(28)} ${help}`,
	);
	return [
		'Usage: npm run sandbox -- [flags]   (each flag also as an environment variable)',
		'',
		...lines,
		'  --help',
	].join('\n');
}

/** Parses env first, then argv (`--flag value` or `--flag=value`); throws on unknown flags or bad values. */
export function parseCliConfig(
	argv: string[],
	env: Record<string, string | undefined>,
): CliOptions {
	const fromEnv: Parsed = {};
	for (const { env: name, apply } of SETTINGS) {
		const value = env[name];
		if (value !== undefined && value !== '') apply(fromEnv, value);
	}
	const fromArgs: Parsed = {};
	for (let index = 0; index < argv.length; index++) {
		const argument = argv[index];
		if (argument === '--help' || argument === '-h') {
			fromArgs.help = true;
			continue;
		}
		const equals = argument.indexOf('=');
		const flag = equals === -1 ? argument : argument.slice(0, equals);
		const found = SETTINGS.find((candidate) => candidate.flag === flag);
		if (!found) throw new Error(`unknown flag ${argument} (see --help)`);
		let value: string | undefined;
		if (equals !== -1) value = argument.slice(equals + 1);
		else {
			value = argv[index + 1];
			index++;
		}
		if (value === undefined) throw new Error(`${flag} needs a value`);
		found.apply(fromArgs, value);
	}
	const merged: Parsed = { ...fromEnv, ...fromArgs };
	const { ratePerSecond, rateBurst, ...out } = merged;
	if (fromEnv.faults || fromArgs.faults) out.faults = { ...fromEnv.faults, ...fromArgs.faults };
	if (ratePerSecond !== undefined && ratePerSecond > 0) {
		out.rateLimit = { perSecond: ratePerSecond, burst: rateBurst ?? Math.max(1, ratePerSecond) };
	}
	return out;
}
