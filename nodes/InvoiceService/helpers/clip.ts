/**
 * A text cut to at most `maxChars` characters, marked with "..." where it was cut: for anything the service or the
 * user's data sizes (a service's message, an error's text) that ends up in a message, a hint or a saved record.
 */
export function clip(text: string, maxChars: number): string {
	return text.length > maxChars ? `${text.slice(0, maxChars - 3)}...` : text;
}
