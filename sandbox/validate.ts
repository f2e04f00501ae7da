// Strict request validation for the sandbox service. Every message names the offending field, so a client
// (the n8n node) can pass the service's own message on to the user unchanged.

export const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
export type Currency = (typeof CURRENCIES)[number];

export interface CustomerInput {
	firstName: string;
	lastName: string;
	email: string;
	companyName?: string;
}

export interface InvoiceLine {
	description: string;
	price: number;
	[extra: string]: unknown;
}

export interface InvoiceInput {
	customerId: string;
	amount: number;
	currency: Currency;
	items: InvoiceLine[];
	sendEmail: boolean;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

// local@domain.tld: no whitespace, exactly one @, a dot in the domain, labels not empty.
const EMAIL_RE =
	/^[^\s@"(),:;<>[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

export function isValidEmail(value: string): boolean {
	if (value.length > 254) return false;
	if (!EMAIL_RE.test(value)) return false;
	const local = value.slice(0, value.indexOf('@'));
	return (
		local.length <= 64 && !local.startsWith('.') && !local.endsWith('.') && !local.includes('..')
	);
}

/** True when `value` has at most two decimal places (tolerating binary floating point noise). */
export function hasAtMostTwoDecimals(value: number): boolean {
	const cents = value * 100;
	return Math.abs(cents - Math.round(cents)) <= 1e-7 * Math.max(1, Math.abs(cents));
}

function describe(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'an array';
	if (typeof value === 'string')
		return `"${value.length > 60 ? value.slice(0, 57) + '...' : value}"`;
	if (typeof value === 'object') return 'an object';
	return `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requiredString(
	body: Record<string, unknown>,
	field: string,
	errors: string[],
): string | undefined {
	const value = body[field];
	if (value === undefined || value === null) {
		errors.push(`Missing parameter ${field}: a non-empty string is required`);
		return undefined;
	}
	if (typeof value !== 'string') {
		errors.push(`Invalid parameter ${field}: expected a non-empty string, got ${describe(value)}`);
		return undefined;
	}
	if (value.trim() === '') {
		errors.push(`Invalid parameter ${field}: must not be empty`);
		return undefined;
	}
	return value;
}

export function validateCustomer(body: unknown): Validation<CustomerInput> {
	if (!isPlainObject(body)) {
		return { ok: false, errors: [`The request body must be a JSON object, got ${describe(body)}`] };
	}
	const errors: string[] = [];
	const firstName = requiredString(body, 'first_name', errors);
	const lastName = requiredString(body, 'last_name', errors);
	const email = requiredString(body, 'email', errors);
	if (email !== undefined && !isValidEmail(email)) {
		errors.push(`Invalid parameter email: ${describe(email)} is not a valid e-mail address`);
	}
	let companyName: string | undefined;
	const company = body.company_name;
	if (company !== undefined && company !== null) {
		if (typeof company !== 'string') {
			errors.push(`Invalid parameter company_name: expected a string, got ${describe(company)}`);
		} else if (company.trim() !== '') {
			companyName = company.trim();
		}
	}
	if (errors.length > 0) return { ok: false, errors };
	return {
		ok: true,
		value: { firstName: firstName!.trim(), lastName: lastName!.trim(), email: email!, companyName },
	};
}

/**
 * Validates a create-invoice body. `customerExists` is asked only when customer_id is a non-empty string.
 * Whether `amount` equals the sum of the line prices is deliberately NOT checked (the spec does not say);
 * the caller records mismatches in its statistics instead.
 */
export function validateInvoice(
	body: unknown,
	customerExists: (id: string) => boolean,
): Validation<InvoiceInput> {
	if (!isPlainObject(body)) {
		return { ok: false, errors: [`The request body must be a JSON object, got ${describe(body)}`] };
	}
	const errors: string[] = [];

	const customerId = requiredString(body, 'customer_id', errors);
	if (customerId !== undefined && !customerExists(customerId)) {
		errors.push(`Invalid parameter customer_id: no customer with id "${customerId}" exists`);
	}

	const amount = body.amount;
	if (amount === undefined || amount === null) {
		errors.push('Missing parameter amount: a positive number is required');
	} else if (typeof amount !== 'number' || !Number.isFinite(amount)) {
		errors.push(`Invalid parameter amount: expected a number, got ${describe(amount)}`);
	} else if (amount <= 0) {
		errors.push(`Invalid parameter amount: must be greater than 0, got ${amount}`);
	} else if (!hasAtMostTwoDecimals(amount)) {
		errors.push(`Invalid parameter amount: at most 2 decimal places are allowed, got ${amount}`);
	}

	const currency = body.currency;
	if (currency === undefined || currency === null) {
		errors.push(`Missing parameter currency: one of ${CURRENCIES.join(', ')} is required`);
	} else if (
		typeof currency !== 'string' ||
		!(CURRENCIES as readonly string[]).includes(currency)
	) {
		errors.push(
			`Invalid parameter currency: must be one of ${CURRENCIES.join(', ')}, got ${describe(currency)}`,
		);
	}

	const items = body.items;
	const lines: InvoiceLine[] = [];
	if (items === undefined || items === null) {
		errors.push('Missing parameter items: a non-empty array of invoice lines is required');
	} else if (!Array.isArray(items)) {
		errors.push(
			`Invalid parameter items: expected an array of invoice lines, got ${describe(items)}`,
		);
	} else if (items.length === 0) {
		errors.push('Invalid parameter items: at least one invoice line is required');
	} else {
		items.forEach((line: unknown, i) => {
			const at = `items[${i}]`;
			if (!isPlainObject(line)) {
				errors.push(
					`Invalid parameter ${at}: expected an object with description and price, got ${describe(line)}`,
				);
				return;
			}
			let ok = true;
			const description = line.description;
			if (description === undefined || description === null) {
				errors.push(`Missing parameter ${at}.description: a non-empty string is required`);
				ok = false;
			} else if (typeof description !== 'string' || description.trim() === '') {
				errors.push(
					`Invalid parameter ${at}.description: expected a non-empty string, got ${describe(description)}`,
				);
				ok = false;
			}
			const price = line.price;
			if (price === undefined || price === null) {
				errors.push(`Missing parameter ${at}.price: a number is required`);
				ok = false;
			} else if (typeof price !== 'number' || !Number.isFinite(price)) {
				errors.push(`Invalid parameter ${at}.price: expected a number, got ${describe(price)}`);
				ok = false;
			}
			if (ok) lines.push({ ...line, description: description as string, price: price as number });
		});
	}

	const sendEmail = body.send_email;
	if (sendEmail !== undefined && sendEmail !== null && typeof sendEmail !== 'boolean') {
		errors.push(`Invalid parameter send_email: expected true or false, got ${describe(sendEmail)}`);
	}

	if (errors.length > 0) return { ok: false, errors };
	return {
		ok: true,
		value: {
			customerId: customerId!,
			amount: amount as number,
			currency: currency as Currency,
			items: lines,
			sendEmail: sendEmail === true,
		},
	};
}
