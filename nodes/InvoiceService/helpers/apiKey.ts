/**
 * The API key as people paste it. Surrounding spaces and line breaks (a terminal copy, a stray newline) and
 * invisible characters around it are dropped; a leading "Bearer " or a whole "Authorization: Bearer " (copied
 * from a curl line or the service's docs) is understood and dropped too, because the node adds it itself; and so
 * is one pair of quotes around the key (copied from JSON or an .env file). What remains must be able to travel in
 * an HTTP header as the service issued it: visible ASCII only. Anything else (a space or line break inside, a
 * typographic quote, a non-Latin letter) is refused before sending, with a message naming the API Key field,
 * never Node's "Invalid character in header content". Messages never quote the key.
 */

export type ApiKeyReading = { key: string } | { problem: string };

// Around the key: whitespace and invisible format characters (zero-width space, byte-order mark).
const AROUND = /^[\s\p{Cf}]+|[\s\p{Cf}]+$/gu;
const BEARER_PREFIX = /^(?:authorization\s*:\s*)?bearer(?:\s+|$)/i;
const QUOTED = /^(["'\u201C\u2018])(.*)(["'\u201D\u2019])$/su;
const CLOSING_QUOTE: Record<string, string> = {
	'"': '"',
	"'": "'",
	'\u201C': '\u201D',
	'\u2018': '\u2019',
};
const HEADER_SAFE = /^[\x21-\x7e]+$/;

const FIELD = 'The API Key in the Invoice Service API credential';
const PASTE_AGAIN = 'Copy the key again from the app’s API settings and paste it on its own.';

export function readApiKey(value: unknown): ApiKeyReading {
	const text =
		typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
	// "Bearer Bearer x" is not a key anybody was given: only one prefix is understood, inside or outside quotes.
	let key = unquote(text.replace(AROUND, ''));
	if (BEARER_PREFIX.test(key)) key = unquote(key.replace(BEARER_PREFIX, '').replace(AROUND, ''));
	if (key === '') return { problem: `${FIELD} is empty. ${PASTE_AGAIN}` };
	if (!HEADER_SAFE.test(key)) {
		const index = [...key].findIndex((character) => !HEADER_SAFE.test(character));
		const character = [...key][index];
		return {
			problem: `${FIELD} contains ${describeCharacter(character)} at character ${index + 1}, which cannot be sent in an HTTP header. ${PASTE_AGAIN}`,
		};
	}
	return { key };
}

/** The text inside one matching pair of quotes around it ("…", '…', “…”, ‘…’), trimmed; else the text. */
function unquote(text: string): string {
	const quoted = QUOTED.exec(text);
	return quoted && CLOSING_QUOTE[quoted[1]] === quoted[3] ? quoted[2].replace(AROUND, '') : text;
}

function describeCharacter(character: string): string {
	if (character === ' ') return 'a space';
	if (character === '\t') return 'a tab';
	if (/[\n\r\u2028\u2029]/.test(character)) return 'a line break';
	const code = character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
	return `the character U+${code}`;
}
