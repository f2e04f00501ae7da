// Command-line flags and SANDBOX_* environment variables → Partial<SandboxOptions>. Flags win over env.
import type { SandboxOptions } from './server';

interface Setting {
	flag: string;
	env: string;
	help: string;
	apply: (o: Parsed, value: string) => void;
}

export type CliOptions = Partial<SandboxOptions> & { help?: boolean };
type Parsed = CliOptions & { ratePerSecond?: number; rateBurst?: number };

function num(
	name: string,
	value: string,
	{ min = 0, max = Infinity, integer = false } = {},
): number {
	const n = Number(value);
	if (
		value.trim() === '' ||
		!Number.isFinite(n) ||
		n < min ||
		n > max ||
		(integer && !Number.isInteger(n))
	) {
		throw new Error(
			`${name} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max}, got "${value}"`,
		);
	}
	return n;
}

function fault(key: keyof SandboxOptions['faults'], flag: string): Setting {
	const env = `SANDBOX_${flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
	return {
		flag,
		env,
		help: `rate 0..1 of create-* requests answered with the ${key} fault`,
		apply: (o, v) => {
			o.faults = {
				...(o.faults ?? {}),
				[key]: num(flag, v, { max: 1 }),
			} as SandboxOptions['faults'];
		},
	};
}

export const SETTINGS: Setting[] = [
	{
		flag: '--port',
		env: 'SANDBOX_PORT',
		help: 'port to listen on (0 = any free port; default 8787)',
		apply: (o, v) => (o.port = num('--port', v, { max: 65535, integer: true })),
	},
	{
		flag: '--host',
		env: 'SANDBOX_HOST',
		help: 'interface to listen on (default 127.0.0.1)',
		apply: (o, v) => (o.host = v),
	},
	{
		flag: '--style',
		env: 'SANDBOX_STYLE',
		help: 'plain | bubble (bubble wraps success as {status:"success",response} and uses Bubble error shapes)',
		apply: (o, v) => {
			if (v !== 'plain' && v !== 'bubble')
				throw new Error(`--style must be plain or bubble, got "${v}"`);
			o.style = v;
		},
	},
	{
		flag: '--latency',
		env: 'SANDBOX_LATENCY',
		help: 'fixed latency per answer in ms',
		apply: (o, v) => (o.latencyMs = num('--latency', v)),
	},
	{
		flag: '--jitter',
		env: 'SANDBOX_JITTER',
		help: 'uniform jitter ± ms around the latency',
		apply: (o, v) => (o.jitterMs = num('--jitter', v)),
	},
	{
		flag: '--rate',
		env: 'SANDBOX_RATE',
		help: 'token bucket refill per second for create-* (0 = no limit)',
		apply: (o, v) => (o.ratePerSecond = num('--rate', v)),
	},
	{
		flag: '--burst',
		env: 'SANDBOX_BURST',
		help: 'token bucket size (default = rate)',
		apply: (o, v) => (o.rateBurst = num('--burst', v, { min: 1 })),
	},
	fault('http500', '--fault-500'),
	fault('html502', '--fault-502'),
	fault('resetBefore', '--fault-reset-before'),
	fault('resetAfter', '--fault-reset-after'),
	fault('slow', '--fault-slow'),
	fault('trickle', '--fault-trickle'),
	{
		flag: '--slow-ms',
		env: 'SANDBOX_SLOW_MS',
		help: 'how long a "slow" fault waits (default 30000)',
		apply: (o, v) => (o.slowMs = num('--slow-ms', v)),
	},
	{
		flag: '--trickle-ms',
		env: 'SANDBOX_TRICKLE_MS',
		help: 'how long a trickled body takes (create-* trickle fault, PDF trickle; default 120000)',
		apply: (o, v) => (o.trickleMs = num('--trickle-ms', v)),
	},
	{
		flag: '--pdf-fault',
		env: 'SANDBOX_PDF_FAULT',
		help: 'trickle | oversized | endless | none: what every GET of a PDF does',
		apply: (o, v) => {
			if (v === 'none') o.pdfFault = null;
			else if (v === 'trickle' || v === 'oversized' || v === 'endless') o.pdfFault = v;
			else throw new Error(`--pdf-fault must be trickle, oversized, endless or none, got "${v}"`);
		},
	},
	{
		flag: '--pdf-oversize-bytes',
		env: 'SANDBOX_PDF_OVERSIZE_BYTES',
		help: 'size of the oversized PDF fault (default 67108864 = 64 MiB)',
		apply: (o, v) =>
			(o.pdfOversizeBytes = num('--pdf-oversize-bytes', v, { min: 1, integer: true })),
	},
	{
		flag: '--pdf-origin',
		env: 'SANDBOX_PDF_ORIGIN',
		help: 'same | other (other = PDFs served by a second listener on another port)',
		apply: (o, v) => {
			if (v !== 'same' && v !== 'other')
				throw new Error(`--pdf-origin must be same or other, got "${v}"`);
			o.pdfOrigin = v;
		},
	},
	{
		flag: '--outbox',
		env: 'SANDBOX_OUTBOX',
		help: 'directory for the .eml files of send_email (default: a temp dir)',
		apply: (o, v) => (o.outboxDir = v),
	},
	{
		flag: '--key',
		env: 'SANDBOX_KEY',
		help: 'accepted API key; repeat the flag or separate with commas for several (default sandbox-key-1234)',
		apply: (o, v) => {
			const keys = v
				.split(',')
				.map((k) => k.trim())
				.filter((k) => k !== '');
			if (keys.length === 0) throw new Error('--key must not be empty');
			o.apiKeys = [...(o.apiKeys ?? []), ...keys];
		},
	},
	{
		flag: '--seed',
		env: 'SANDBOX_SEED',
		help: 'seed for deterministic fault and jitter draws',
		apply: (o, v) => (o.seed = num('--seed', v, { min: -Infinity, integer: true })),
	},
];

export function usage(): string {
	const lines = SETTINGS.map(
		(s) => `  ${(s.flag + ' <v>').padEnd(26)} ${s.env.padEnd(28)} ${s.help}`,
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
	for (const s of SETTINGS) {
		const v = env[s.env];
		if (v !== undefined && v !== '') s.apply(fromEnv, v);
	}
	const fromArgs: Parsed = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--help' || arg === '-h') {
			fromArgs.help = true;
			continue;
		}
		const eq = arg.indexOf('=');
		const flag = eq === -1 ? arg : arg.slice(0, eq);
		const setting = SETTINGS.find((s) => s.flag === flag);
		if (!setting) throw new Error(`unknown flag ${arg} (see --help)`);
		let value: string | undefined;
		if (eq !== -1) value = arg.slice(eq + 1);
		else {
			value = argv[i + 1];
			i++;
		}
		if (value === undefined) throw new Error(`${flag} needs a value`);
		setting.apply(fromArgs, value);
	}
	const merged: Parsed = { ...fromEnv, ...fromArgs };
	const { ratePerSecond, rateBurst, ...out } = merged;
	if (fromEnv.faults || fromArgs.faults)
		out.faults = { ...fromEnv.faults, ...fromArgs.faults } as SandboxOptions['faults'];
	if (ratePerSecond !== undefined && ratePerSecond > 0) {
		out.rateLimit = { perSecond: ratePerSecond, burst: rateBurst ?? Math.max(1, ratePerSecond) };
	}
	return out;
}
