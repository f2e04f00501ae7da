// The service's records and rules: customers (e-mail unique, case-insensitive), invoices for existing
// customers, their PDFs (rendered on first use, then cached) and the e-mails of send_email.
// Answers are outcomes, not HTTP: the service endpoints give them their status and style.
import { buildInvoiceEmail } from './mail';
import type { Outbox } from './outbox';
import { renderInvoicePdf } from './pdf';
import { countInto, type Counters } from './stats';
import { validateCustomer, validateInvoice, type InvoiceLine } from './validate';

export interface CustomerRecord {
	id: string;
	firstName: string;
	lastName: string;
	name: string;
	email: string;
	companyName?: string;
	createdAt: string;
}

export interface InvoiceRecord {
	id: string;
	customerId: string;
	amount: number;
	currency: string;
	items: InvoiceLine[];
	itemsTotal: number;
	sendEmail: boolean;
	status: 'sent';
	downloadUrl: string;
	createdAt: string;
}

export interface StoredRecords {
	customers: CustomerRecord[];
	invoices: InvoiceRecord[];
}

/** What an operation did: the created object's fields, or why nothing was created. */
export type Outcome =
	| { status: 200; fields: Record<string, unknown> }
	| { status: 400 | 409; message: string };

const invalid = (errors: string[]): Outcome => ({ status: 400, message: errors.join('; ') });

export class RecordStore {
	private readonly customers = new Map<string, CustomerRecord>();
	/** Lower-cased e-mail → customer id. */
	private readonly customerByEmail = new Map<string, string>();
	private readonly invoices = new Map<string, InvoiceRecord>();
	private readonly pdfs = new Map<string, Promise<Uint8Array>>();
	private nextCustomerNumber = 1;
	private nextInvoiceNumber = 1;

	constructor(
		private readonly counters: Counters,
		private readonly outbox: Outbox,
		private readonly downloadUrlFor: (invoiceId: string) => string,
	) {}

	createCustomer(body: unknown): Outcome {
		const validation = validateCustomer(body);
		if (!validation.ok) return invalid(validation.errors);
		const input = validation.value;
		const emailKey = input.email.toLowerCase();
		const stats = this.counters.current;
		if (this.customerByEmail.has(emailKey)) {
			stats.duplicateEmailRejections++;
			return { status: 409, message: 'A customer with this email already exists' };
		}
		const record: CustomerRecord = {
			id: `cust_${this.nextCustomerNumber++}`,
			firstName: input.firstName,
			lastName: input.lastName,
			name: `${input.firstName} ${input.lastName}`,
			email: input.email,
			companyName: input.companyName,
			createdAt: new Date().toISOString(),
		};
		this.customers.set(record.id, record);
		this.customerByEmail.set(emailKey, record.id);
		stats.customers++;
		countInto(stats.customersByEmail, emailKey);
		return { status: 200, fields: { id: record.id, name: record.name, email: record.email } };
	}

	async createInvoice(body: unknown): Promise<Outcome> {
		const validation = validateInvoice(body, (id) => this.customers.has(id));
		if (!validation.ok) return invalid(validation.errors);
		const input = validation.value;
		const id = `inv_${this.nextInvoiceNumber++}`;
		const itemsTotal =
			Math.round(input.items.reduce((sum, line) => sum + line.price, 0) * 100) / 100;
		const record: InvoiceRecord = {
			id,
			customerId: input.customerId,
			amount: input.amount,
			currency: input.currency,
			items: input.items,
			itemsTotal,
			sendEmail: input.sendEmail,
			status: 'sent',
			downloadUrl: this.downloadUrlFor(id),
			createdAt: new Date().toISOString(),
		};
		this.invoices.set(id, record);
		const stats = this.counters.current;
		stats.invoices++;
		countInto(stats.invoicesByCustomer, record.customerId);
		if (Math.abs(itemsTotal - record.amount) > 0.005) stats.invoiceAmountMismatches++;
		if (record.sendEmail) await this.sendEmail(record);
		return {
			status: 200,
			fields: { invoice_id: id, status: record.status, download_url: record.downloadUrl },
		};
	}

	private async sendEmail(invoice: InvoiceRecord): Promise<void> {
		const customer = this.customers.get(invoice.customerId)!;
		const message = buildInvoiceEmail({
			invoiceId: invoice.id,
			to: customer.email,
			toName: customer.name,
			amount: invoice.amount,
			currency: invoice.currency,
			items: invoice.items,
			date: new Date(invoice.createdAt),
			pdf: await this.pdfFor(invoice),
		});
		await this.outbox.write(invoice.id, message);
		this.counters.current.emailsWritten++;
	}

	findInvoice(id: string): InvoiceRecord | undefined {
		return this.invoices.get(id);
	}

	/** The invoice's PDF, rendered once (a failed render is forgotten, so the next call tries again). */
	pdfFor(invoice: InvoiceRecord): Promise<Uint8Array> {
		let pdf = this.pdfs.get(invoice.id);
		if (!pdf) {
			const customer = this.customers.get(invoice.customerId)!;
			pdf = renderInvoicePdf({
				invoiceId: invoice.id,
				createdAt: new Date(invoice.createdAt),
				customer: {
					id: customer.id,
					name: customer.name,
					email: customer.email,
					companyName: customer.companyName,
				},
				items: invoice.items,
				amount: invoice.amount,
				currency: invoice.currency,
			});
			this.counters.current.pdf.generated++;
			this.pdfs.set(invoice.id, pdf);
			pdf.catch(() => this.pdfs.delete(invoice.id));
		}
		return pdf;
	}

	/** Everything stored, as a copy. */
	records(): StoredRecords {
		const everything = {
			customers: [...this.customers.values()],
			invoices: [...this.invoices.values()],
		};
		return JSON.parse(JSON.stringify(everything)) as StoredRecords;
	}

	/** Forgets every record and restarts the ids at 1. */
	clear(): void {
		this.customers.clear();
		this.customerByEmail.clear();
		this.invoices.clear();
		this.pdfs.clear();
		this.nextCustomerNumber = 1;
		this.nextInvoiceNumber = 1;
	}
}
