import { isBlank } from './blank';
import { clip } from './clip';
import { jsonPathOf } from './jsonReference';
import { describeValue, FieldError } from './validate';

/**
 * The text of a value that was missing, as JavaScript writes it into text (`String(undefined)`, `${$json.x}`):
 * every event whose field is missing would share it as its key, so it counts as blank.
 */
const MISSING_AS_TEXT = new Set(['undefined', 'null', 'NaN', '[object Object]']);

/** Longer expressions are cut in a message. */
const QUOTE_LIMIT = 80;

/**
 * An item's Idempotency Key from its value (`value`, what the parameter gave for the item); `rawOf` gives the
 * parameter as written, for the message (only asked for then). A set key must identify the event: text or a
 * finite number (`12` and `"12"` are the same key), trimmed. Blank (nothing, null, empty or invisible text, or the text JavaScript makes of a
 * missing value, such as "undefined") would turn the duplicate check off for the item, so it is refused, as is
 * anything else (true, an object, a list). Throws FieldError naming `field`, what the parameter gave, and what to
 * do (after a Webhook trigger the event is under `body`).
 */
export function requireIdempotencyKey(value: unknown, rawOf: () => unknown, field: string): string {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	const text = typeof value === 'string' ? value.trim() : undefined;
	if (isBlank(value) || (text !== undefined && MISSING_AS_TEXT.has(text))) {
		const raw = rawOf();
		const gave = text === undefined ? describeValue(value) : `${describeValue(value)} (blank)`;
		throw new FieldError(field, `is blank: ${writtenAs(raw, gave)}`, {
			next: `${whereTheEventIs(raw)}. A blank key would turn the duplicate check off, so the item fails instead. Point the key at a field every event has (the input pane shows the fields), or remove the Idempotency Key option to send without the check.`,
		});
	}
	if (text !== undefined) return text;
	const written = writtenAs(rawOf(), describeValue(value));
	throw new FieldError(field, `must be text or a number: ${written}`, {
		next: 'Point the key at the one field that identifies the event, such as its ID.',
	});
}

/** What the parameter is and what it gave: `the expression {{ $json.eventId }} gave nothing`. */
function writtenAs(raw: unknown, gave: string): string {
	if (typeof raw !== 'string' || !raw.startsWith('=')) {
		return isBlank(raw) ? 'the field is empty' : `the field contains ${gave}`;
	}
	const expression = raw.slice(1).trim();
	if (expression === '') return 'the expression is empty';
	return `the expression ${clip(expression, QUOTE_LIMIT)} gave ${gave}`;
}

/** Where the event is after a Webhook trigger, with the user's own field under `body` where it can be shown. */
function whereTheEventIs(raw: unknown): string {
	const path = jsonPathOf(raw);
	if (path?.[0] === 'body') {
		return "Check the field's name in the input pane: this item has no value there";
	}
	const field = path ? path.map(segment).join('') : '.eventId';
	return `After a Webhook trigger the event is under body, e.g. {{ $json.body${field} }}`;
}

const segment = (name: string) =>
	/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
