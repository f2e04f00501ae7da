/**
 * The words of a message a builder reads: an error's title at most MAX_TITLE_CHARS (n8n shows it as the heading of
 * the error, and of the error item), whatever the service or the user's data put in it; the rest goes to the
 * description, whole.
 */
export const MAX_TITLE_CHARS = 160;

/** Shortest title kept when cutting at a clause: below it, the cut is at a word. */
const MIN_CLAUSE_CHARS = 60;

export const capitalized = (text: string): string =>
	`${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/**
 * A title that fits, and the description that keeps what was cut: the title cut at the last clause (": ", ". ",
 * " (") or word that fits, marked "…"; the description starts with the whole message.
 */
export function fitTitle(
	message: string,
	description?: string | null,
): { message: string; description?: string } {
	if (message.length <= MAX_TITLE_CHARS)
		return { message, ...(description ? { description } : {}) };
	const room = message.slice(0, MAX_TITLE_CHARS - 1);
	const clause = Math.max(room.lastIndexOf(': '), room.lastIndexOf('. '), room.lastIndexOf(' ('));
	const word = room.lastIndexOf(' ');
	const cut =
		clause >= MIN_CLAUSE_CHARS ? clause : word >= MIN_CLAUSE_CHARS ? word : MAX_TITLE_CHARS - 1;
	return {
		message: `${message.slice(0, cut)}…`,
		description: [message, description].filter(Boolean).join('\n\n'),
	};
}
