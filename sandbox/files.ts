// The invoice PDFs at {pdf origin}/files/inv_<n>.pdf (no key needed, like a public storage link), with the
// PDF faults: trickle, oversized, endless.
import type * as http from 'node:http';
import { ENDLESS_CAP_BYTES, ENDLESS_CAP_MS, streamFiller } from './http-io';
import type { ServiceContext } from './service-context';

export class InvoiceFiles {
	constructor(private readonly context: ServiceContext) {}

	async handle(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		pathname: string,
	): Promise<void> {
		req.resume();
		if (req.method !== 'GET' && req.method !== 'HEAD') {
			const body = { status: 'error', message: 'Use GET to download a file' };
			this.context.responder.json(res, 405, body, { Allow: 'GET, HEAD' });
			return;
		}
		const fileName = /^\/files\/(inv_\d+)\.pdf$/.exec(pathname);
		const invoice = fileName ? this.context.store.findInvoice(fileName[1]) : undefined;
		if (!invoice) {
			this.context.responder.json(res, 404, {
				status: 'error',
				message: `No such file: ${pathname}`,
			});
			return;
		}
		await this.context.wait(this.context.plan.pdfLatencyMs());
		const headers = {
			'Content-Type': 'application/pdf',
			'Content-Disposition': `inline; filename="${invoice.id}.pdf"`,
			'Cache-Control': 'private, max-age=3600',
		};
		const { pdfFault, pdfOversizeBytes } = this.context.options();
		const fault = req.method === 'GET' ? pdfFault : null;
		const pdfFaults = this.context.counters.current.pdfFaults;
		if (fault === 'oversized') {
			this.countDownload(req);
			pdfFaults.oversized++;
			this.context.responder.startStream(res, 200, {
				...headers,
				'Content-Length': pdfOversizeBytes,
			});
			streamFiller(res, pdfOversizeBytes);
			return;
		}
		if (fault === 'endless') {
			this.countDownload(req);
			pdfFaults.endless++;
			this.context.responder.startStream(res, 200, headers);
			const onCap = () => this.context.responder.cut(req.socket);
			streamFiller(res, ENDLESS_CAP_BYTES, { ms: ENDLESS_CAP_MS, onCap });
			return;
		}
		const answer = { status: 200, body: await this.context.store.pdfFor(invoice), headers };
		this.countDownload(req);
		if (fault === 'trickle') pdfFaults.trickle++;
		this.context.responder.send(res, answer, fault === 'trickle');
	}

	private countDownload(req: http.IncomingMessage): void {
		const pdf = this.context.counters.current.pdf;
		pdf.downloads++;
		if (req.headers.authorization !== undefined) pdf.downloadsWithAuthorization++;
	}
}
