// The sandbox's options: their types, defaults and checks, and the run-time patch (POST /__admin/config).

export interface FaultRates {
	http500: number;
	html502: number;
	resetBefore: number;
	resetAfter: number;
	slow: number;
	/** The record is created, then the JSON body is sent a few bytes at a time over trickleMs. */
	trickle: number;
	/** The record is created, then a 200 HTML page with no length and no end (until the client closes). */
	endlessPage: number;
}

export type FaultKind = keyof FaultRates;

/** The order of the fault draw. New kinds go at the end, so a seed keeps its sequence of the older ones. */
export const FAULT_KINDS: FaultKind[] = [
	'http500',
	'html502',
	'resetBefore',
	'resetAfter',
	'slow',
	'trickle',
	'endlessPage',
];

/**
 * A fault for one chosen request (`Sandbox.faultOnce`): any fault kind, or `refuse`, a 400 that processes nothing
 * (a failure the client knows for certain did not create anything).
 */
export type OneShotFault = FaultKind | 'refuse';

/** The next create-* request whose raw body contains `bodyContains` gets `fault` instead of its drawn one. */
export interface OneShotRule {
	bodyContains: string;
	fault: OneShotFault;
}

export function checkOneShotRule(rule: unknown): OneShotRule {
	const { bodyContains, fault } = (rule ?? {}) as Partial<OneShotRule>;
	if (typeof bodyContains !== 'string' || bodyContains === '')
		throw new Error('bodyContains must be a non-empty string');
	if (fault !== 'refuse' && !FAULT_KINDS.includes(fault as FaultKind))
		throw new Error(`unknown fault ${String(fault)} (known: refuse, ${FAULT_KINDS.join(', ')})`);
	return { bodyContains, fault: fault as OneShotFault };
}

/** What every GET of a PDF does while set: see sandbox/README.md. */
export type PdfFault = 'trickle' | 'oversized' | 'endless';
export const PDF_FAULTS: PdfFault[] = ['trickle', 'oversized', 'endless'];

export interface RateLimit {
	perSecond: number;
	burst: number;
}

export interface SandboxOptions {
	host: string;
	port: number;
	apiKeys: string[];
	style: 'plain' | 'bubble';
	latencyMs: number;
	jitterMs: number;
	rateLimit?: RateLimit;
	faults: FaultRates;
	slowMs: number;
	/** How long a trickled answer (create-* trickle fault, PDF trickle) takes to send its body. */
	trickleMs: number;
	pdfFault: PdfFault | null;
	/** Content-Length and size of the body the `oversized` PDF fault sends. */
	pdfOversizeBytes: number;
	pdfOrigin: 'same' | 'other';
	/** The keys stop working after this many more create-* requests (a key revoked mid-run); null = never. */
	revokeKeysAfter: number | null;
	outboxDir?: string;
	seed?: number;
}

/** What startSandbox accepts: any option may be left out; faults are merged key by key over the defaults. */
export type SandboxStartOptions = Partial<Omit<SandboxOptions, 'faults'>> & {
	faults?: Partial<FaultRates>;
};

/** Options that only take effect when the listeners start. */
const FIXED_AT_START = ['host', 'port', 'pdfOrigin', 'outboxDir'] as const;

/** Options a patch replaces as they are (rateLimit, faults and seed have rules of their own). */
const PLAIN_PATCH_KEYS = [
	'style',
	'latencyMs',
	'jitterMs',
	'slowMs',
	'trickleMs',
	'pdfFault',
	'pdfOversizeBytes',
	'apiKeys',
	'revokeKeysAfter',
] as const;

/** What POST /__admin/config (and Sandbox.configure) may change at run time. */
export type RuntimeConfigPatch = Partial<
	Pick<SandboxOptions, (typeof PLAIN_PATCH_KEYS)[number]>
> & {
	rateLimit?: RateLimit | null;
	faults?: Partial<FaultRates>;
	seed?: number | null;
};

/** Every option a patch may name. */
const PATCH_KEYS: string[] = [...PLAIN_PATCH_KEYS, 'rateLimit', 'faults', 'seed'];

export const DEFAULT_SANDBOX_BEARER = 'sandbox-key-1234';

export const DEFAULT_OPTIONS: SandboxOptions = {
	host: '127.0.0.1',
	port: 0,
	apiKeys: [DEFAULT_SANDBOX_BEARER],
	style: 'plain',
	latencyMs: 0,
	jitterMs: 0,
	rateLimit: undefined,
	faults: {
		http500: 0,
		html502: 0,
		resetBefore: 0,
		resetAfter: 0,
		slow: 0,
		trickle: 0,
		endlessPage: 0,
	},
	slowMs: 30_000,
	trickleMs: 120_000,
	pdfFault: null,
	pdfOversizeBytes: 64 * 1024 * 1024,
	pdfOrigin: 'same',
	revokeKeysAfter: null,
	outboxDir: undefined,
	seed: undefined,
};

function isNonNegativeNumber(value: unknown): value is number {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function checkRateLimit({ perSecond, burst }: RateLimit): void {
	if (!(typeof perSecond === 'number' && perSecond > 0 && Number.isFinite(perSecond)))
		throw new Error(`rateLimit.perSecond must be > 0, got ${String(perSecond)}`);
	if (!(typeof burst === 'number' && burst >= 1 && Number.isFinite(burst)))
		throw new Error(`rateLimit.burst must be >= 1, got ${String(burst)}`);
}

function checkFaultRates(faults: FaultRates): void {
	let sum = 0;
	for (const kind of FAULT_KINDS) {
		const rate = faults[kind];
		if (!(typeof rate === 'number' && rate >= 0 && rate <= 1))
			throw new Error(`faults.${kind} must be a rate between 0 and 1, got ${String(rate)}`);
		sum += rate;
	}
	const unknownKind = Object.keys(faults).find((key) => !FAULT_KINDS.includes(key as FaultKind));
	if (unknownKind)
		throw new Error(`unknown fault kind ${unknownKind} (known: ${FAULT_KINDS.join(', ')})`);
	if (sum > 1 + 1e-9) throw new Error(`the fault rates add up to ${sum}, more than 1`);
}

/** Validates a full option set; throws an Error naming the bad option. */
export function checkOptions(options: SandboxOptions): void {
	const { style, pdfOrigin, port, apiKeys, pdfFault, pdfOversizeBytes, seed } = options;
	if (style !== 'plain' && style !== 'bubble')
		throw new Error(`style must be 'plain' or 'bubble', got ${String(style)}`);
	if (pdfOrigin !== 'same' && pdfOrigin !== 'other')
		throw new Error(`pdfOrigin must be 'same' or 'other', got ${String(pdfOrigin)}`);
	if (!Number.isInteger(port) || port < 0 || port > 65535)
		throw new Error(`port must be an integer 0..65535, got ${port}`);
	if (
		!Array.isArray(apiKeys) ||
		apiKeys.length === 0 ||
		apiKeys.some((key) => typeof key !== 'string' || key === '' || /\s/.test(key))
	) {
		throw new Error('apiKeys must be a non-empty list of non-empty strings without whitespace');
	}
	for (const name of ['latencyMs', 'jitterMs', 'slowMs', 'trickleMs'] as const) {
		if (!isNonNegativeNumber(options[name]))
			throw new Error(`${name} must be a number >= 0, got ${String(options[name])}`);
	}
	if (options.rateLimit !== undefined) checkRateLimit(options.rateLimit);
	checkFaultRates(options.faults);
	if (pdfFault !== null && !PDF_FAULTS.includes(pdfFault)) {
		throw new Error(
			`pdfFault must be null or one of ${PDF_FAULTS.join(', ')}, got ${String(pdfFault)}`,
		);
	}
	const { revokeKeysAfter } = options;
	if (
		revokeKeysAfter !== null &&
		!(Number.isSafeInteger(revokeKeysAfter) && revokeKeysAfter >= 0)
	) {
		throw new Error(
			`revokeKeysAfter must be an integer >= 0 or null, got ${String(revokeKeysAfter)}`,
		);
	}
	if (!(Number.isSafeInteger(pdfOversizeBytes) && pdfOversizeBytes >= 1)) {
		throw new Error(`pdfOversizeBytes must be an integer >= 1, got ${String(pdfOversizeBytes)}`);
	}
	if (seed !== undefined && !(typeof seed === 'number' && Number.isFinite(seed)))
		throw new Error(`seed must be a number, got ${String(seed)}`);
}

/** Merges user options over the defaults (faults merged key by key) and validates them. */
export function resolveOptions(options: SandboxStartOptions = {}): SandboxOptions {
	const defined = Object.fromEntries(
		Object.entries(options).filter(([, value]) => value !== undefined),
	) as SandboxStartOptions;
	const resolved: SandboxOptions = {
		...DEFAULT_OPTIONS,
		...defined,
		apiKeys: [...(defined.apiKeys ?? DEFAULT_OPTIONS.apiKeys)],
		faults: { ...DEFAULT_OPTIONS.faults, ...(defined.faults ?? {}) },
		rateLimit: defined.rateLimit ? { ...defined.rateLimit } : undefined,
	};
	checkOptions(resolved);
	return resolved;
}

/** The rate limit a patch asks for: null, absent or perSecond 0 turn it off; burst defaults to perSecond. */
function patchedRateLimit(value: unknown): RateLimit | undefined {
	const requested = value as { perSecond?: unknown; burst?: unknown } | null | undefined;
	if (requested === null || requested === undefined || requested.perSecond === 0) return undefined;
	if (typeof requested !== 'object')
		throw new Error('rateLimit must be an object {perSecond, burst} or null');
	return {
		perSecond: requested.perSecond as number,
		burst: (requested.burst ?? requested.perSecond) as number,
	};
}

/** Applies a run-time patch to a copy of `current`; throws on unknown/immutable keys or bad values. */
export function applyPatch(current: SandboxOptions, patch: unknown): SandboxOptions {
	if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
		throw new Error('the config patch must be a JSON object');
	const changes = patch as Record<string, unknown>;
	const immutable = FIXED_AT_START.filter((key) => key in changes);
	if (immutable.length)
		throw new Error(`${immutable.join(', ')} cannot be changed at run time (restart the sandbox)`);
	const unknown = Object.keys(changes).filter((key) => !PATCH_KEYS.includes(key));
	if (unknown.length)
		throw new Error(
			`unknown config key(s): ${unknown.join(', ')} (allowed: ${PATCH_KEYS.join(', ')})`,
		);
	const next: SandboxOptions = {
		...current,
		apiKeys: [...current.apiKeys],
		faults: { ...current.faults },
	};
	for (const key of PLAIN_PATCH_KEYS) {
		if (key in changes) Object.assign(next, { [key]: changes[key] });
	}
	if ('seed' in changes) next.seed = changes.seed === null ? undefined : (changes.seed as number);
	if ('rateLimit' in changes) next.rateLimit = patchedRateLimit(changes.rateLimit);
	if ('faults' in changes) {
		if (typeof changes.faults !== 'object' || changes.faults === null)
			throw new Error('faults must be an object');
		next.faults = { ...next.faults, ...(changes.faults as Partial<FaultRates>) };
	}
	checkOptions(next);
	return next;
}
