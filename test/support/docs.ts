/**
 * The anchors GitHub and npm give a Markdown page's headings (lower case, punctuation dropped, spaces as "-"),
 * each with its heading.
 */
export function headingAnchors(markdown: string): Map<string, string> {
	return new Map(
		[...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, text]) => {
			const heading = text.trim();
			const anchor = heading
				.toLowerCase()
				.replace(/[^\p{L}\p{N} _-]/gu, '')
				.replace(/ /g, '-');
			return [anchor, heading] as const;
		}),
	);
}
