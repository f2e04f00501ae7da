/* eslint-disable @n8n/community-nodes/no-restricted-imports */
// Shared helpers for the sandbox tests: real HTTP on 127.0.0.1 with the global fetch.
import { inflateSync } from 'node:zlib';

export interface Answer {
	status: number;
	headers: Headers;
	text: string;
	json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function call(
	url: string,
	opts: {
		method?: string;
		key?: string | null;
		body?: unknown;
		raw?: string;
		headers?: Record<string, string>;
	} = {},
): Promise<Answer> {
	const headers: Record<string, string> = { ...(opts.headers ?? {}) };
	if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
	let body: string | undefined;
	if (opts.raw !== undefined) body = opts.raw;
	else if (opts.body !== undefined) body = JSON.stringify(opts.body);
	if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
		headers['Content-Type'] = 'application/json';
	}
	const res = await fetch(url, {
		method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
		headers,
		body,
	});
	const text = await res.text();
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: res.status, headers: res.headers, text, json };
}

export const customer = (n: number, extra: Record<string, unknown> = {}) => ({
	first_name: `Ada${n}`,
	last_name: 'Lovelace',
	email: `ada${n}@example.com`,
	...extra,
});

export const invoice = (customerId: string, extra: Record<string, unknown> = {}) => ({
	customer_id: customerId,
	amount: 150.5,
	currency: 'EUR',
	items: [
		{ description: 'Consulting', price: 100 },
		{ description: 'Travel', price: 50.5 },
	],
	...extra,
});

/** Every decompressed (or raw) stream body of a PDF file, as latin1 text. */
export function pdfStreams(pdf: Buffer): string[] {
	const out: string[] = [];
	const text = pdf.toString('latin1');
	const re = /stream\r?\n/g;
	let m: RegExpExecArray | null;
	while ((m = re.exec(text)) !== null) {
		const start = m.index + m[0].length;
		const end = text.indexOf('endstream', start);
		if (end === -1) break;
		const bytes = pdf.subarray(start, end);
		try {
			out.push(inflateSync(bytes).toString('latin1'));
		} catch {
			out.push(bytes.toString('latin1'));
		}
		re.lastIndex = end + 'endstream'.length;
	}
	return out;
}

/** The text runs drawn by the content streams (pdf-lib writes standard-font text as <hex> Tj). */
export function pdfTextRuns(pdf: Buffer): string[] {
	const runs: string[] = [];
	for (const stream of pdfStreams(pdf)) {
		for (const m of stream.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:[^()\\]|\\.)*)\)\s*Tj/g)) {
			runs.push(m[1] !== undefined ? Buffer.from(m[1], 'hex').toString('latin1') : m[2]);
		}
	}
	return runs;
}

/** True when some text run on a page contains `text`. */
export function pdfDrawsText(pdf: Buffer, text: string): boolean {
	return pdfTextRuns(pdf).some((run) => run.includes(text));
}
