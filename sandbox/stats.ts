// What the sandbox counts (GET /__admin/stats). One Counters object is shared by the store, the service
// endpoints and the listeners; reset() starts it afresh but keeps the gauges of what is still running.
import type { FaultKind, PdfFault } from './options';

export interface SandboxStats {
	requests: { total: number; byPath: Record<string, number>; byStatus: Record<string, number> };
	customers: number;
	invoices: number;
	customersByEmail: Record<string, number>;
	invoicesByCustomer: Record<string, number>;
	authHeadersSeenAtPdfHost: string[];
	// Extras beyond the contract:
	faults: Record<FaultKind, number> & {
		rateLimited: number;
		/** One-shot `refuse` faults answered (400, nothing processed). */
		refused: number;
	};
	duplicateEmailRejections: number;
	invoiceAmountMismatches: number;
	emailsWritten: number;
	pdf: { generated: number; downloads: number; downloadsWithAuthorization: number };
	pdfFaults: Record<PdfFault, number>;
	concurrency: { current: number; max: number };
	/** Sockets currently open on the sandbox's listeners. */
	openConnections: number;
	/** Responses the client closed before they ended (trickled, oversized, endless or any other). */
	abortedResponses: number;
	internalErrors: number;
}

const MAX_AUTH_HEADERS_KEPT = 10_000;

function emptyStats(): SandboxStats {
	return {
		requests: { total: 0, byPath: {}, byStatus: {} },
		customers: 0,
		invoices: 0,
		customersByEmail: {},
		invoicesByCustomer: {},
		authHeadersSeenAtPdfHost: [],
		faults: {
			http500: 0,
			html502: 0,
			resetBefore: 0,
			resetAfter: 0,
			slow: 0,
			trickle: 0,
			endlessPage: 0,
			rateLimited: 0,
			refused: 0,
		},
		duplicateEmailRejections: 0,
		invoiceAmountMismatches: 0,
		emailsWritten: 0,
		pdf: { generated: 0, downloads: 0, downloadsWithAuthorization: 0 },
		pdfFaults: { trickle: 0, oversized: 0, endless: 0 },
		concurrency: { current: 0, max: 0 },
		openConnections: 0,
		abortedResponses: 0,
		internalErrors: 0,
	};
}

/** Adds one to `tally[key]`. */
export function countInto(tally: Record<string, number>, key: string): void {
	tally[key] = (tally[key] ?? 0) + 1;
}

/** Every PDF download counts under one key, whatever the file. */
function statsPathKey(pathname: string): string {
	return pathname.startsWith('/files/') ? '/files/*' : pathname;
}

export class Counters {
	/** The live numbers; the owners of each number write them directly. */
	current: SandboxStats = emptyStats();

	countRequest(pathname: string): void {
		this.current.requests.total++;
		countInto(this.current.requests.byPath, statsPathKey(pathname));
	}

	countStatus(status: number | 'reset'): void {
		countInto(this.current.requests.byStatus, String(status));
	}

	recordAuthHeaderAtPdfHost(header: string): void {
		const seen = this.current.authHeadersSeenAtPdfHost;
		if (seen.length < MAX_AUTH_HEADERS_KEPT) seen.push(header);
	}

	/** Counts one create-* request in flight until the returned function is called. */
	enterCreate(): () => void {
		const concurrency = this.current.concurrency;
		concurrency.current++;
		concurrency.max = Math.max(concurrency.max, concurrency.current);
		return () => concurrency.current--;
	}

	/** Zero everything except the gauges of requests and sockets still open. */
	reset(): void {
		const { concurrency, openConnections } = this.current;
		this.current = emptyStats();
		this.current.concurrency.current = concurrency.current;
		this.current.openConnections = openConnections;
	}

	/** A copy, safe to hand out. */
	snapshot(): SandboxStats {
		return JSON.parse(JSON.stringify(this.current)) as SandboxStats;
	}
}
