// Renders a one-or-more page invoice PDF with pdf-lib and the standard Helvetica fonts.
import { PDFDocument, PDFFont, PDFPage, StandardFonts, rgb } from 'pdf-lib';

export interface InvoicePdfData {
	invoiceId: string;
	createdAt: Date;
	customer: { id: string; name: string; email: string; companyName?: string };
	items: Array<{ description: string; price: number }>;
	amount: number;
	currency: string;
}

const PAGE_W = 595.28; // A4
const PAGE_H = 841.89;
const MARGIN = 50;
const PRICE_COL_W = 130;

/** Standard fonts only know WinAnsi: anything else becomes '?', control characters become spaces. */
function sanitizer(font: PDFFont): (text: string) => string {
	const known = new Set(font.getCharacterSet());
	return (text: string) => {
		let out = '';
		for (const ch of text) {
			const cp = ch.codePointAt(0)!;
			if (cp < 0x20 || cp === 0x7f) out += ' ';
			else out += known.has(cp) ? ch : '?';
		}
		return out;
	};
}

function fit(text: string, font: PDFFont, size: number, maxWidth: number): string {
	if (font.widthOfTextAtSize(text, size) <= maxWidth) return text;
	let lo = 0;
	let hi = text.length;
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (font.widthOfTextAtSize(text.slice(0, mid) + '...', size) <= maxWidth) lo = mid;
		else hi = mid - 1;
	}
	return text.slice(0, lo) + '...';
}

export function formatMoney(value: number): string {
	return value.toFixed(2);
}

export async function renderInvoicePdf(data: InvoicePdfData): Promise<Uint8Array> {
	const doc = await PDFDocument.create();
	const font = await doc.embedFont(StandardFonts.Helvetica);
	const bold = await doc.embedFont(StandardFonts.HelveticaBold);
	const clean = sanitizer(font);
	const title = `Invoice ${data.invoiceId}`;

	doc.setTitle(title);
	doc.setSubject(`Invoice for ${clean(data.customer.name)}`);
	doc.setAuthor('Customer and Invoice Service (sandbox)');
	doc.setCreator('invoice-service sandbox');
	doc.setProducer('pdf-lib');
	doc.setCreationDate(data.createdAt);
	doc.setModificationDate(data.createdAt);

	const grey = rgb(0.4, 0.4, 0.4);
	const black = rgb(0, 0, 0);
	const textW = PAGE_W - 2 * MARGIN;
	let page: PDFPage = doc.addPage([PAGE_W, PAGE_H]);
	let y = PAGE_H - MARGIN;

	const line = (
		text: string,
		opts: { size?: number; f?: PDFFont; x?: number; color?: ReturnType<typeof rgb> } = {},
	) => {
		const size = opts.size ?? 11;
		const f = opts.f ?? font;
		page.drawText(fit(clean(text), f, size, textW - ((opts.x ?? MARGIN) - MARGIN)), {
			x: opts.x ?? MARGIN,
			y,
			size,
			font: f,
			color: opts.color ?? black,
		});
	};

	line(title, { size: 22, f: bold });
	y -= 28;
	line(`Date: ${data.createdAt.toISOString().slice(0, 10)}`, { color: grey });
	y -= 16;
	line(`Status: sent`, { color: grey });
	y -= 30;

	line('Bill to', { f: bold, size: 12 });
	y -= 16;
	line(data.customer.name);
	y -= 15;
	line(data.customer.email);
	y -= 15;
	line(`Company: ${data.customer.companyName ?? '-'}`);
	y -= 15;
	line(`Customer id: ${data.customer.id}`, { color: grey, size: 9 });
	y -= 30;

	const header = () => {
		page.drawText('Description', { x: MARGIN, y, size: 11, font: bold });
		const ph = `Price (${data.currency})`;
		page.drawText(ph, {
			x: PAGE_W - MARGIN - bold.widthOfTextAtSize(ph, 11),
			y,
			size: 11,
			font: bold,
		});
		y -= 6;
		page.drawLine({
			start: { x: MARGIN, y },
			end: { x: PAGE_W - MARGIN, y },
			thickness: 0.8,
			color: grey,
		});
		y -= 16;
	};
	header();

	for (const item of data.items) {
		if (y < MARGIN + 60) {
			page = doc.addPage([PAGE_W, PAGE_H]);
			y = PAGE_H - MARGIN;
			line(`${title} (continued)`, { f: bold, size: 12 });
			y -= 26;
			header();
		}
		const desc = fit(clean(item.description), font, 10.5, textW - PRICE_COL_W);
		page.drawText(desc, { x: MARGIN, y, size: 10.5, font });
		const price = formatMoney(item.price);
		page.drawText(price, {
			x: PAGE_W - MARGIN - font.widthOfTextAtSize(price, 10.5),
			y,
			size: 10.5,
			font,
		});
		y -= 16;
	}

	if (y < MARGIN + 50) {
		page = doc.addPage([PAGE_W, PAGE_H]);
		y = PAGE_H - MARGIN;
	}
	y -= 4;
	page.drawLine({
		start: { x: MARGIN, y: y + 10 },
		end: { x: PAGE_W - MARGIN, y: y + 10 },
		thickness: 0.8,
		color: grey,
	});
	const totalLabel = 'Total excl. VAT';
	const total = `${formatMoney(data.amount)} ${data.currency}`;
	page.drawText(totalLabel, { x: MARGIN, y: y - 4, size: 12, font: bold });
	page.drawText(total, {
		x: PAGE_W - MARGIN - bold.widthOfTextAtSize(total, 12),
		y: y - 4,
		size: 12,
		font: bold,
	});
	y -= 24;
	page.drawText(`Currency: ${data.currency}`, { x: MARGIN, y, size: 9, font, color: grey });

	return doc.save({ useObjectStreams: false });
}
