import { randomInt } from 'node:crypto';

import { FieldError } from '../helpers/validate';
import { isBlank } from '../helpers/blank';
import { UNKNOWN_OUTCOME_WAY_FORWARD } from '../transport/errors';

/**
 * Resend codes: how the user lets one unknown outcome be sent again, and only that one. Every unknown outcome gets
 * a fresh random code when it happens (an item sent without an answer; a key another process held in flight past
 * the wait), kept with it (the run record's item; the key's row, as an entry `code:<code> <key>`) and printed in
 * its error. A retry sends an unknown item again only when Options → Resend Unknown Outcomes Of lists its code; a
 * resent item that ends unknown again gets a new code, and a key's code entry goes when a claim takes it over. So a
 * code left in the option never sends a later unknown outcome: that one has a code nobody has entered yet.
 */

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L, U). */
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 8;
const CODE = new RegExp(`^[${ALPHABET}]{${LENGTH}}$`);

/** A fresh code for one unknown outcome, e.g. "K7QM2XR9". */
export function newResendCode(): string {
	let code = '';
	for (let index = 0; index < LENGTH; index++) code += ALPHABET[randomInt(ALPHABET.length)];
	return code;
}

/** The option's codes (upper case, each once): blank is none; anything but codes is refused. Throws FieldError. */
export function readResendCodes(value: unknown, field: string): string[] {
	if (isBlank(value)) return [];
	const text = typeof value === 'string' ? value : undefined;
	const given = (text ?? '').split(/[\s,;]+/).filter(Boolean);
	const wrong =
		text === undefined
			? [JSON.stringify(value)]
			: given.filter((part) => !CODE.test(part.toUpperCase()));
	if (wrong.length > 0) {
		throw new FieldError(field, `must list resend codes, got ${wrong.slice(0, 3).join(', ')}`, {
			next: `Enter the codes that "outcome unknown" errors give (${LENGTH} letters and digits each, e.g. K7QM2XR9), separated by commas, or clear the option.`,
		});
	}
	return [...new Set(given.map((part) => part.toUpperCase()))];
}

/** The way forward from one unknown outcome, naming its code. */
export function resendWayForward(code: string): string {
	return `Check the service; if the record is not there, enter ${code} in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow.`;
}

/** The way forward from several unknown outcomes, each with its own code. */
export const EACH_WAY_FORWARD =
	'Check the service for each of them; enter the codes of those whose record is not there in Options → Resend Unknown Outcomes Of (separated by commas) and retry this execution with the current workflow.';

/**
 * Words of an unknown outcome's error with its code: the transport's way forward (which names no code) becomes
 * the one naming this code, in the message and the description.
 */
export function withCode<T extends { message: string; description?: string | null }>(
	error: T,
	code: string,
): T {
	const coded = resendWayForward(code);
	error.message = error.message.replace(UNKNOWN_OUTCOME_WAY_FORWARD, coded);
	const description = error.description ?? '';
	if (description.includes(UNKNOWN_OUTCOME_WAY_FORWARD)) {
		error.description = description.replace(UNKNOWN_OUTCOME_WAY_FORWARD, coded);
	} else if (!error.message.includes(coded)) {
		error.description = [description, coded].filter(Boolean).join(' ');
	}
	return error;
}
