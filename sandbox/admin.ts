// The admin API under /__admin/ (no auth: a loopback dev tool; not counted in the stats).
import type * as http from 'node:http';
import { jsonAnswer, readBody, writeWhole } from './http-io';

/** What the admin API drives: the same calls as the Sandbox object. */
export interface SandboxControl {
	stats(): unknown;
	records(): unknown;
	config(): unknown;
	/** Throws an Error naming the problem when the patch is not valid. */
	configure(patch: unknown): unknown;
	/** Throws an Error naming the problem when the rule is not valid. */
	faultOnce(rule: unknown): void;
	reset(): void;
}

export const ADMIN_ROOT = '/__admin';

type AdminAnswer = { status: number; body: unknown };

function parsePatch(raw: Buffer): { ok: true; patch: unknown } | { ok: false; message: string } {
	try {
		return { ok: true, patch: raw.length ? JSON.parse(raw.toString('utf8')) : {} };
	} catch (err) {
		return { ok: false, message: `Invalid JSON: ${(err as Error).message}` };
	}
}

/** A POST whose JSON body `apply` takes: 200 with what it returns, or 400 naming the problem. */
function withJsonBody(
	apply: (control: SandboxControl, body: unknown) => Record<string, unknown>,
): (control: SandboxControl, raw: Buffer) => AdminAnswer {
	return (control, raw) => {
		const parsed = parsePatch(raw);
		if (!parsed.ok) return { status: 400, body: { status: 'error', message: parsed.message } };
		try {
			return { status: 200, body: { status: 'ok', ...apply(control, parsed.patch) } };
		} catch (err) {
			return { status: 400, body: { status: 'error', message: (err as Error).message } };
		}
	};
}

const configure = withJsonBody((control, patch) => ({ config: control.configure(patch) }));
const faultOnce = withJsonBody((control, rule) => {
	control.faultOnce(rule);
	return {};
});

/** `METHOD path` → the answer. */
const ADMIN_ROUTES = new Map<string, (control: SandboxControl, raw: Buffer) => AdminAnswer>([
	['GET /__admin/stats', (control) => ({ status: 200, body: control.stats() })],
	['GET /__admin/records', (control) => ({ status: 200, body: control.records() })],
	['GET /__admin/config', (control) => ({ status: 200, body: control.config() })],
	['POST /__admin/config', configure],
	['POST /__admin/fault-once', faultOnce],
	[
		'POST /__admin/reset',
		(control) => {
			control.reset();
			return { status: 200, body: { status: 'ok' } };
		},
	],
]);

export function isAdminPath(pathname: string): boolean {
	return pathname === ADMIN_ROOT || pathname.startsWith(`${ADMIN_ROOT}/`);
}

export async function handleAdmin(
	control: SandboxControl,
	req: http.IncomingMessage,
	res: http.ServerResponse,
	pathname: string,
): Promise<void> {
	const route = `${req.method ?? 'GET'} ${pathname.replace(/\/+$/, '')}`;
	const raw = await readBody(req).catch(() => Buffer.alloc(0));
	const answer = ADMIN_ROUTES.get(route);
	if (answer) {
		const { status, body } = answer(control, raw);
		writeWhole(res, jsonAnswer(status, body));
		return;
	}
	const message = `Unknown admin route ${route}; try GET /__admin/stats, GET /__admin/records, GET|POST /__admin/config, POST /__admin/fault-once, POST /__admin/reset`;
	writeWhole(res, jsonAnswer(404, { status: 'error', message }));
}
