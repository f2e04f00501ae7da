// Virtual time for the simulation: a seeded generator and a schedule of events that run one at a time, in order of
// time, then of scheduling, so that a seed replays exactly.

/** mulberry32: a small seeded generator. */
export function generator(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) | 0;
		let t = Math.imul(state ^ (state >>> 15), 1 | state);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

interface Event {
	at: number;
	seq: number;
	fire: () => void;
}

export class Schedule {
	now = 0;
	private seq = 0;
	/** A binary heap by (at, seq). */
	private readonly events: Event[] = [];

	at(at: number, fire: () => void): void {
		const events = this.events;
		const event = { at, seq: this.seq++, fire };
		let index = events.length;
		events.push(event);
		while (index > 0) {
			const parent = (index - 1) >> 1;
			if (!earlier(event, events[parent])) break;
			events[index] = events[parent];
			index = parent;
		}
		events[index] = event;
	}

	/** Resolves `ms` later; never, when `alive` says no by then (a killed process's waits never end). */
	async sleep(ms: number, alive: () => boolean = () => true): Promise<void> {
		await new Promise<void>((resolve) =>
			this.at(this.now + Math.max(0, ms), () => {
				if (alive()) resolve();
			}),
		);
	}

	/** Runs events until `done` or the limit; every promise an event settles has run on before the next event. */
	async run(done: () => boolean, limit: number): Promise<void> {
		for (;;) {
			// What the last event set going has scheduled its next event before the queue is looked at.
			await new Promise((resolve) => setImmediate(resolve));
			if (this.events.length === 0 || done()) break;
			if (this.events[0].at > limit) break;
			const event = this.take();
			this.now = event.at;
			event.fire();
		}
	}

	private take(): Event {
		const events = this.events;
		const first = events[0];
		const last = events.pop()!;
		if (events.length > 0) {
			let index = 0;
			for (;;) {
				const left = 2 * index + 1;
				if (left >= events.length) break;
				const right = left + 1;
				const child = right < events.length && earlier(events[right], events[left]) ? right : left;
				if (!earlier(events[child], last)) break;
				events[index] = events[child];
				index = child;
			}
			events[index] = last;
		}
		return first;
	}
}

const earlier = (a: Event, b: Event) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
