// What the service's endpoints (operations.ts, files.ts) work with, handed over by server.ts.
import type { FaultPlan } from './fault-plan';
import type { SandboxOptions } from './options';
import type { Responder } from './responder';
import type { Counters } from './stats';
import type { RecordStore } from './store';

export interface ServiceContext {
	store: RecordStore;
	plan: FaultPlan;
	responder: Responder;
	counters: Counters;
	/** The options in force now (they change with POST /__admin/config). */
	options: () => SandboxOptions;
	/** Waits `ms`; rejects with an AbortError when the sandbox closes meanwhile. */
	wait: (ms: number) => Promise<void>;
}
