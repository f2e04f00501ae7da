// Nothing visible: whitespace, and invisible format characters such as a zero-width space or a byte-order mark.
const BLANK = /^[\s\p{Cf}]*$/u;

/** Whether a field's value means "not given": nothing, null, or text with nothing visible in it. */
export function isBlank(value: unknown): boolean {
	return value === undefined || value === null || (typeof value === 'string' && BLANK.test(value));
}
