// The local sandbox of the Customer and Invoice Service: a real HTTP server on node:http (no framework).
// See sandbox/README.md for the behaviour and every decision the spec leaves open. This module assembles
// the parts: options (options.ts), the record store (store.ts), the fault plan (fault-plan.ts), the
// service's endpoints (operations.ts, files.ts), the admin API (admin.ts) and the HTTP wire (wire.ts).
import { FaultPlan } from './fault-plan';
import { InvoiceFiles } from './files';
import { Operations } from './operations';
import {
	applyPatch,
	checkOneShotRule,
	resolveOptions,
	type OneShotRule,
	type RuntimeConfigPatch,
	type SandboxOptions,
	type SandboxStartOptions,
} from './options';
import { Outbox } from './outbox';
import { Responder } from './responder';
import type { ServiceContext } from './service-context';
import { Counters, type SandboxStats } from './stats';
import { RecordStore, type StoredRecords } from './store';
import { Wire, abortableWait } from './wire';

export { createRng } from './fault-plan';
export { API_PREFIXES } from './operations';
export {
	DEFAULT_OPTIONS,
	DEFAULT_SANDBOX_BEARER,
	PDF_FAULTS,
	applyPatch,
	checkOptions,
	resolveOptions,
	type FaultKind,
	type FaultRates,
	type OneShotFault,
	type OneShotRule,
	type PdfFault,
	type RuntimeConfigPatch,
	type SandboxOptions,
	type SandboxStartOptions,
} from './options';
export type { SandboxStats } from './stats';
export type { CustomerRecord, InvoiceRecord } from './store';

export interface Sandbox {
	rootUrl: string;
	baseUrl: string;
	apiKey: string;
	outboxDir: string;
	/** Root of the origin that serves PDFs (equals rootUrl when pdfOrigin is 'same'). */
	pdfRootUrl: string;
	stats(): SandboxStats;
	reset(): void;
	close(): Promise<void>;
	/** Same as POST /__admin/config; returns the effective options. Throws on an invalid patch. */
	configure(patch: RuntimeConfigPatch): SandboxOptions;
	/** The effective options (a copy). */
	config(): SandboxOptions;
	/** Everything stored (same as GET /__admin/records). */
	records(): StoredRecords;
	/**
	 * Arms a fault for one request: the next create-* request whose raw body contains `bodyContains` gets `fault`
	 * instead of its drawn one, once (same as POST /__admin/fault-once). Throws on an invalid rule.
	 */
	faultOnce(rule: OneShotRule): void;
}

/** The calls the Sandbox object and the admin API share (configure takes any JSON there). */
type SandboxCalls = Pick<Sandbox, 'stats' | 'records' | 'config' | 'reset'> & {
	configure(patch: unknown): SandboxOptions;
	faultOnce(rule: unknown): void;
};

export async function startSandbox(options: SandboxStartOptions = {}): Promise<Sandbox> {
	let current = resolveOptions(options);
	const currentOptions = () => current;
	const counters = new Counters();
	const outbox = new Outbox(current.outboxDir);
	const plan = new FaultPlan(currentOptions);
	const responder = new Responder(counters, currentOptions);
	const shutdown = new AbortController();
	// The store needs the PDF origin for download URLs; it is known once the wire listens.
	const store: RecordStore = new RecordStore(
		counters,
		outbox,
		(id) => `${wire.pdfRootUrl}/files/${id}.pdf`,
	);

	const control: SandboxCalls = {
		stats: () => counters.snapshot(),
		records: () => store.records(),
		config: (): SandboxOptions =>
			JSON.parse(JSON.stringify({ ...current, outboxDir: outbox.dir })) as SandboxOptions,
		configure: (patch: unknown): SandboxOptions => {
			const previous = current;
			current = applyPatch(previous, patch);
			plan.optionsChanged(previous);
			return control.config();
		},
		faultOnce: (rule: unknown) => plan.armOnce(checkOneShotRule(rule)),
		reset: () => {
			store.clear();
			counters.reset();
			outbox.clear();
			plan.restart();
		},
	};

	const service: ServiceContext = {
		store,
		plan,
		responder,
		counters,
		options: currentOptions,
		wait: abortableWait(shutdown.signal),
	};
	const wire: Wire = new Wire(current, shutdown, counters, responder, {
		control,
		operations: new Operations(service),
		files: new InvoiceFiles(service),
	});
	await wire.listen();
	return {
		rootUrl: wire.rootUrl,
		baseUrl: `${wire.rootUrl}/api/1.1/wf`,
		apiKey: current.apiKeys[0],
		outboxDir: outbox.dir,
		pdfRootUrl: wire.pdfRootUrl,
		...control,
		close: async () => {
			if (wire.isClosed) return;
			await wire.close();
			outbox.dispose();
		},
	};
}
