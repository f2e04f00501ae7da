// A webhook storm: N events POSTed to one URL, spread evenly over T seconds, with at most `concurrency`
// requests in flight (an event whose turn comes while the limit is reached waits for a free slot). Each
// event's send time and answer are recorded. Node's http with a keep-alive agent, so that the generator's own
// connection set-up does not pace the storm.
import * as http from 'node:http';

export interface StormOptions {
	url: string;
	events: number;
	/** The last event is sent (at the latest) this long after the first one. */
	withinMs: number;
	/** Requests in flight at most. */
	concurrency: number;
	/** When each request is due, in ms after the first (non-decreasing); instead of evenly over withinMs. */
	offsetsMs?: number[];
	/** The JSON body of event i. */
	body(i: number): unknown;
	/** An answer that has not come after this long counts as a failure (status 0). */
	timeoutMs?: number;
}

export interface EventResult {
	i: number;
	/** Date.now() when the request was written. */
	sentAt: number;
	/** Date.now() when the answer had been read in full (or the request failed). */
	doneAt: number;
	/** HTTP status; 0 when no answer came (socket error or timeout). */
	status: number;
	/** The answer's body (at most 500 characters), or the error. */
	text: string;
}

export interface StormResult {
	startedAt: number;
	events: EventResult[];
	/** When the last event was sent, after the first. */
	sendSpanMs: number;
}

function post(
	agent: http.Agent,
	url: URL,
	payload: string,
	timeoutMs: number,
): Promise<Omit<EventResult, 'i'>> {
	const sentAt = Date.now();
	return new Promise((resolve) => {
		const done = (status: number, text: string) =>
			resolve({ sentAt, doneAt: Date.now(), status, text: text.slice(0, 500) });
		const req = http.request(
			url,
			{
				method: 'POST',
				agent,
				headers: {
					'content-type': 'application/json',
					'content-length': Buffer.byteLength(payload),
				},
				timeout: timeoutMs,
			},
			(res) => {
				let text = '';
				res.setEncoding('utf8');
				res.on('data', (d: string) => (text += d));
				res.on('end', () => done(res.statusCode ?? 0, text));
				res.on('error', (e) => done(0, String(e)));
			},
		);
		req.on('timeout', () => req.destroy(new Error(`no answer after ${timeoutMs} ms`)));
		req.on('error', (e) => done(0, String(e)));
		req.end(payload);
	});
}

export async function storm(opts: StormOptions): Promise<StormResult> {
	const url = new URL(opts.url);
	const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
	const timeoutMs = opts.timeoutMs ?? 10 * 60_000;
	const gapMs = opts.events > 1 ? opts.withinMs / (opts.events - 1) : 0;
	const results: EventResult[] = [];
	const inFlight = new Set<Promise<void>>();
	const startedAt = Date.now();
	let lastSent = startedAt;
	try {
		for (let i = 0; i < opts.events; i++) {
			const due = startedAt + (opts.offsetsMs?.[i] ?? i * gapMs);
			if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
			while (inFlight.size >= opts.concurrency) await Promise.race(inFlight);
			const payload = JSON.stringify(opts.body(i));
			const p: Promise<void> = post(agent, url, payload, timeoutMs).then((r) => {
				results.push({ i, ...r });
				inFlight.delete(p);
			});
			inFlight.add(p);
			lastSent = Date.now();
		}
		await Promise.all(inFlight);
	} finally {
		agent.destroy();
	}
	results.sort((a, b) => a.i - b.i);
	return { startedAt, events: results, sendSpanMs: lastSent - startedAt };
}
