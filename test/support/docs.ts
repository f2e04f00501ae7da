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

/**
 * The first table after the heading whose text starts with `heading`, as rows keyed by the header's cells
 * (trimmed; the separator row dropped).
 */
export function tableAfter(markdown: string, heading: string): Array<Record<string, string>> {
	const start = markdown.search(
		new RegExp(`^#{1,6} ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'),
	);
	if (start < 0) throw new Error(`no heading "${heading}"`);
	const lines = markdown.slice(start).split('\n');
	const first = lines.findIndex((line) => line.startsWith('|'));
	const rows: string[][] = [];
	for (const line of lines.slice(first)) {
		if (!line.startsWith('|')) break;
		rows.push(
			line
				.split('|')
				.slice(1, -1)
				.map((cell) => cell.trim()),
		);
	}
	const [header, , ...body] = rows;
	return body.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]])));
}
