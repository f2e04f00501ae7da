// Builds the RFC 5322 / MIME message the sandbox "sends" for create-invoice with send_email: true.

export interface InvoiceEmailData {
	invoiceId: string;
	to: string;
	toName: string;
	amount: number;
	currency: string;
	items: Array<{ description: string; price: number }>;
	date: Date;
	pdf: Uint8Array;
	from?: string;
}

const CRLF = '\r\n';

/** RFC 2047 encoded-word when the text is not plain printable ASCII (also defeats header injection). */
export function encodeHeaderWord(text: string): string {
	const flat = text.replace(/[\r\n]+/g, ' ');
	if (/^[A-Za-z0-9 .'_-]*$/.test(flat)) return flat;
	return `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

function base64Lines(data: Uint8Array | string): string {
	const b64 = Buffer.from(data as Uint8Array).toString('base64');
	const out: string[] = [];
	for (let i = 0; i < b64.length; i += 76) out.push(b64.slice(i, i + 76));
	return out.join(CRLF);
}

/** Readable 7bit when the text is short-lined ASCII, base64 otherwise. */
function textPart(text: string): string[] {
	const plain = /^[\x20-\x7e\r\n]*$/.test(text) && text.split(CRLF).every((l) => l.length <= 998);
	return plain
		? ['Content-Transfer-Encoding: 7bit', '', text]
		: ['Content-Transfer-Encoding: base64', '', base64Lines(Buffer.from(text, 'utf8'))];
}

export function buildInvoiceEmail(data: InvoiceEmailData): string {
	const boundary = `----=_sandbox_${data.invoiceId}_${data.date.getTime().toString(36)}`;
	const filename = `${data.invoiceId}.pdf`;
	const from = data.from ?? 'Invoice Service Sandbox <invoices@sandbox.invalid>';
	const text = [
		`Hello ${data.toName},`,
		'',
		`please find attached invoice ${data.invoiceId} over ${data.amount.toFixed(2)} ${data.currency} (excl. VAT).`,
		'',
		...data.items.map((i) => `- ${i.description}: ${i.price.toFixed(2)} ${data.currency}`),
		'',
		'Kind regards,',
		'Customer and Invoice Service (sandbox)',
		'',
	].join(CRLF);

	const headers = [
		`From: ${from}`,
		`To: "${encodeHeaderWord(data.toName).replace(/"/g, "'")}" <${data.to}>`,
		`Subject: Invoice ${data.invoiceId}`,
		`Date: ${data.date.toUTCString().replace('GMT', '+0000')}`,
		`Message-ID: <${data.invoiceId}.${data.date.getTime()}@sandbox.invalid>`,
		'MIME-Version: 1.0',
		`Content-Type: multipart/mixed; boundary="${boundary}"`,
	];
	return [
		...headers,
		'',
		'This is a multi-part message in MIME format.',
		`--${boundary}`,
		'Content-Type: text/plain; charset=utf-8',
		...textPart(text),
		`--${boundary}`,
		`Content-Type: application/pdf; name="${filename}"`,
		`Content-Disposition: attachment; filename="${filename}"`,
		'Content-Transfer-Encoding: base64',
		'',
		base64Lines(data.pdf),
		`--${boundary}--`,
		'',
	].join(CRLF);
}
