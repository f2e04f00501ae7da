// The facts the documentation quotes that drift when the code moves on: what the packed package holds, the
// options' defaults, the n8n versions tested, the links between the pages, the measured figures quoted from the
// results files, the messages quoted from the code (on every page), the counts and limits the pages state, and the
// test times. Each test lists every quote that no longer matches, with what to write instead, so a failure says
// which sentence to update.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';

import type { INodeProperties } from 'n8n-workflow';

import { InvoiceServiceApi } from '../../credentials/InvoiceServiceApi.credentials';
import { InvoiceService } from '../../nodes/InvoiceService/InvoiceService.node';
import { READ_ONCE_PER_RUN } from '../../nodes/InvoiceService/actions/common.descriptions';
import { LISTED } from '../../nodes/InvoiceService/exactlyOnce/runReport';
import { KEYS_TIMING } from '../../nodes/InvoiceService/exactlyOnce/timing';
import { BOUNDS, FREE_BLOCK_MS } from '../simulation/bounds';

const lockTiming = KEYS_TIMING.lock;
import { MAX_ANSWER_BYTES } from '../../nodes/InvoiceService/transport/body';
import { WINDOW_MS } from '../../nodes/InvoiceService/transport/deadlines';
import { IDLE_MS, MAX_SERVICES } from '../../nodes/InvoiceService/transport/pace';
import {
	LAST_TRY_AFTER_MS,
	MAX_SENDS,
	MIN_RETRY_WAIT_MS,
} from '../../nodes/InvoiceService/transport/request';
import { REPO_ROOT, packPackage } from '../../tools/n8n';
import { headingAnchors, tableAfter } from '../support/docs';

/** The pages a reader of the project reads; links are checked in all of them. */
const PAGES = [
	'README.md',
	'CHANGELOG.md',
	...fs
		.readdirSync(path.join(REPO_ROOT, 'docs'))
		.filter((name) => name.endsWith('.md'))
		.map((name) => `docs/${name}`),
	'bench/README.md',
	'sandbox/README.md',
	'examples/README.md',
	...fs
		.readdirSync(path.join(REPO_ROOT, 'test'))
		.map((name) => `test/${name}/README.md`)
		.filter((page) => fs.existsSync(path.join(REPO_ROOT, page))),
];
/** The pages that say what a user or contributor gets: the package, the defaults, the versions tested. */
const FACT_PAGES = PAGES.filter((page) => page === 'README.md' || page.startsWith('docs/'));
/** Where the package's files and size are quoted (the only place: see the test below). */
const PACKAGE_PAGE = 'docs/development.md';
/** A quoted size may differ from the packed one by this share: README edits move it a little. */
const SIZE_TOLERANCE = 0.1;

/** A page's text, with line breaks and runs of spaces as single spaces (a quote may wrap). */
function read(page: string): string {
	return fs.readFileSync(path.join(REPO_ROOT, page), 'utf8');
}
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** A page's sentences (its text flattened, split after . ! ? and at table cells). */
const sentences = (page: string) =>
	flat(read(page))
		.split(/(?<=[.!?])\s+(?=[A-Z*`(])|\s\|\s/)
		.map((sentence) => sentence.trim());

/** What one page says about one topic. */
interface Claim {
	page: string;
	topic: string;
	says: string;
}

/**
 * The topics on which the pages disagree: for each, every value with the pages that say it, so a failure names
 * the sentence to change on each side.
 */
function disagreements(claims: Claim[]): string[] {
	const topics = [...new Set(claims.map((claim) => claim.topic))];
	return topics.flatMap((topic) => {
		const about = claims.filter((claim) => claim.topic === topic);
		const values = [...new Set(about.map((claim) => claim.says))];
		if (values.length < 2) return [];
		const who = values.map(
			(value) =>
				`"${value}" (${[...new Set(about.filter((claim) => claim.says === value).map((claim) => claim.page))].join(', ')})`,
		);
		return [`${topic}: ${who.join(' vs ')}`];
	});
}

describe('the packed package, as docs/development.md quotes it', () => {
	/** Files and byte sizes of the tarball `npm pack` makes (the same one the e2e tests install). */
	async function packed() {
		const tarball = await packPackage();
		const tar = gunzipSync(fs.readFileSync(tarball));
		let files = 0;
		let unpackedBytes = 0;
		// tar: a 512-byte header per entry (size in octal at 124, type at 156), the content padded to 512 bytes.
		for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
			const size = parseInt(tar.toString('latin1', at + 124, at + 136).trim(), 8);
			const type = tar.toString('latin1', at + 156, at + 157);
			if (type === '0' || type === '\0') {
				files++;
				unpackedBytes += size;
			}
			at += 512 + Math.ceil(size / 512) * 512;
		}
		return { files, packedBytes: fs.statSync(tarball).size, unpackedBytes };
	}

	test('file count exactly, packed and unpacked size within the tolerance', async () => {
		const actual = await packed();
		const quote = /\*\*(\d+) files, about (\d+) kB packed, (\d+) kB unpacked\*\*/.exec(
			flat(read(PACKAGE_PAGE)),
		);
		expect(quote).not.toBeNull();
		const [, files, packedKb, unpackedKb] = quote!.map(Number);
		const kb = (bytes: number) => Math.round(bytes / 1000);
		const write = `write **${actual.files} files, about ${kb(actual.packedBytes)} kB packed, ${kb(actual.unpackedBytes)} kB unpacked** in ${PACKAGE_PAGE}`;
		const off = (quoted: number, bytes: number) =>
			Math.abs(quoted * 1000 - bytes) > bytes * SIZE_TOLERANCE;
		const problems = [
			...(files !== actual.files ? [`the package holds ${actual.files} files, not ${files}`] : []),
			...(off(packedKb, actual.packedBytes) ? [`packed: ${actual.packedBytes} bytes`] : []),
			...(off(unpackedKb, actual.unpackedBytes) ? [`unpacked: ${actual.unpackedBytes} bytes`] : []),
		].map((problem) => `${problem}: ${write}`);
		expect(problems).toEqual([]);
	}, 300_000);

	test('no other page quotes a file count or size of the package', () => {
		const elsewhere = [
			...FACT_PAGES.filter((page) => page !== PACKAGE_PAGE),
			'CHANGELOG.md',
		].flatMap((page) =>
			[...flat(read(page)).matchAll(/\b\d+ files\b|kB (?:un)?packed/g)].map(
				([quote]) => `${page}: "${quote}" (quote it in ${PACKAGE_PAGE} only)`,
			),
		);
		expect(elsewhere).toEqual([]);
	});
});

describe("the options' defaults quoted in the docs", () => {
	/** Every field of the node and the credential with its default, collections and fixed collections included. */
	function fields(properties: INodeProperties[]): INodeProperties[] {
		return properties.flatMap((property) => {
			const nested = (property.options ?? []).flatMap((option) =>
				'values' in option ? option.values : 'displayName' in option ? [option] : [],
			);
			return [property, ...fields(nested as INodeProperties[])];
		});
	}
	// The tool variant's own copies of fields (shown with `@tool`) default to the model's $fromAI(): the docs'
	// defaults are the node's.
	const all = fields([
		...new InvoiceService().description.properties,
		...new InvoiceServiceApi().properties,
	]).filter((field) => !field.displayOptions?.show?.['@tool']);
	/** A field's one default (the same field appears once per resource). */
	function defaultOf(displayName: string): unknown {
		const defaults = new Set(
			all.filter((f) => f.displayName === displayName).map((f) => f.default),
		);
		expect([displayName, defaults.size]).toEqual([displayName, 1]);
		return [...defaults][0];
	}
	const numbers = all.filter(
		(f) => f.type === 'number' && typeof f.default === 'number' && f.default,
	);
	const numericDefaults = [...new Set(numbers.map((f) => f.displayName))];

	/** Every number default a page quotes: in an options table, or a sentence "<option> … default <n>". */
	function defaultQuotes(): Array<{ page: string; displayName: string; quoted: number }> {
		const quotes = FACT_PAGES.flatMap((page) => {
			const text = read(page);
			return numericDefaults.flatMap((displayName) => {
				// "Max Retry Wait (Seconds)" is written "Max Retry Wait" in sentences.
				const name = displayName.replace(/ \(.*\)$/, '').replace(/[()]/g, '\\$&');
				const table = new RegExp(
					`^\\| ${displayName.replace(/[()]/g, '\\$&')} \\| ([\\d,]+) \\|`,
					'gm',
				);
				// A sentence, or a field table's row: "Max PDF Size (MB) | — | a larger PDF is refused (default 50 MB".
				const sentence = new RegExp(
					`\\b${name}\\b[*)]*(?: \\([A-Z]+\\))?[^.;]{0,40}?\\bdefault \\**([\\d,]+)`,
					'g',
				);
				return [...text.matchAll(table), ...flat(text).matchAll(sentence)].map((match) => ({
					page,
					displayName,
					quoted: Number(match[1].replace(/,/g, '')),
				}));
			});
		});
		// The README's own line about Concurrency does not name the option: "several items at once (default 5)".
		const atOnce = /items at once \(default (\d+)\)/.exec(read('README.md'));
		if (atOnce)
			quotes.push({ page: 'README.md', displayName: 'Concurrency', quoted: Number(atOnce[1]) });
		return quotes;
	}

	test('a number default: in the options table, and wherever a page says "<option> … default <n>"', () => {
		const quotes = defaultQuotes();
		expect(new Set(quotes.map((q) => q.displayName))).toEqual(new Set(numericDefaults));
		const wrong = quotes
			.filter((q) => q.quoted !== defaultOf(q.displayName))
			.map(
				(q) =>
					`${q.page}: ${q.displayName} default ${q.quoted}, the node says ${String(defaultOf(q.displayName))}`,
			);
		expect(wrong).toEqual([]);
	});

	test('a choice marked "(default)" in the README\'s field tables is the default choice', () => {
		// "| Amount: *Sum of Line Prices* (default) | …" or "| Currency | `currency` | `EUR` (default), …".
		const rows = /^\| ([^|:]+?)(?:: \*([^*]+)\*( \(default\))?)? \|(.*)$/gm;
		const marked = [...read('README.md').matchAll(rows)].flatMap(
			([, field, leftChoice, leftDefault, rest]) => {
				const choice = leftDefault ? leftChoice : undefined;
				const inNotes = /`([^`]+)` \(default\)/.exec(rest)?.[1];
				const name = field.replace(/^Options → /, '');
				return (choice ?? inNotes) !== undefined && all.some((f) => f.displayName === name)
					? [{ name, choice: (choice ?? inNotes)! }]
					: [];
			},
		);
		expect(marked.length).toBeGreaterThanOrEqual(2);
		const wrong = marked.filter(({ name, choice }) => {
			const field = all.find((f) => f.displayName === name)!;
			const option = (field.options ?? []).find(
				(o) => 'value' in o && (o.name === choice || o.value === choice),
			);
			return !option || !('value' in option) || option.value !== defaultOf(name);
		});
		expect(wrong).toEqual([]);
	});

	test('no page quotes a number default another page quotes otherwise', () => {
		expect(
			disagreements(
				defaultQuotes().map(({ page, displayName, quoted }) => ({
					page,
					topic: `${displayName} default`,
					says: String(quoted),
				})),
			),
		).toEqual([]);
	});

	test("the options read once per run: each says so, and the README's list names exactly those", () => {
		const runWide = [
			...new Set(
				all
					.filter((f) => String(f.description ?? '').includes(READ_ONCE_PER_RUN))
					.map((f) => f.displayName.replace(/ \(.*\)$/, '')),
			),
		].sort();
		expect(runWide).toEqual([
			'Concurrency',
			'History Size',
			'Max Retry Wait',
			'Resend Unknown Outcomes Of',
			'Timeout',
		]);
		const listed =
			/((?:[A-Z][A-Za-z ]*, )*[A-Z][A-Za-z ]* and [A-Z][A-Za-z ]*) are read once per run, from the first item/
				.exec(flat(read('README.md')))?.[1]
				.split(/, | and /)
				.sort();
		expect(listed).toEqual(runWide);
	});

	test('a switch said to be "Off by default" is off by default', () => {
		const off = [...read('README.md').matchAll(/^\| \*\*([^*]+)\*\* \| Off by default\./gm)].map(
			([, name]) => name,
		);
		expect(off).toEqual(['Allow Plain HTTP']);
		for (const name of off) expect([name, defaultOf(name)]).toEqual([name, false]);
	});
});

describe('the n8n versions the docs say are tested', () => {
	const tested = (JSON.parse(read('tools/n8n/versions.json')) as { tested: string[] }).tested;

	test("README's Compatibility names exactly tools/n8n/versions.json's versions", () => {
		const quote = /Tested with n8n \*\*([\d.]+)\*\* and \*\*([\d.]+)\*\*/.exec(read('README.md'));
		expect(quote).not.toBeNull();
		expect(quote!.slice(1).sort()).toEqual([...tested].sort());
	});
});

describe('links between the pages', () => {
	test('every relative link leads to a file, and every #anchor to a heading', () => {
		const broken = PAGES.flatMap((page) => {
			const text = read(page).replace(/```[\s\S]*?```/g, '');
			return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
				.map(([, link]) => link)
				.filter((link) => !/^(https?|mailto):/.test(link))
				.filter((link) => {
					const [file, anchor] = link.split('#');
					const target = file ? path.join(path.dirname(page), file) : page;
					if (!fs.existsSync(path.join(REPO_ROOT, target))) return true;
					return (
						anchor !== undefined &&
						target.endsWith('.md') &&
						!headingAnchors(read(target)).has(anchor)
					);
				})
				.map((link) => `${page}: ${link}`);
		});
		expect(broken).toEqual([]);
	});
});

describe('measured figures quoted from the results files', () => {
	/**
	 * A side-by-side results file's goals ("- **goal**: each run (median **x**)"), and the sentences of
	 * performance.md that must carry each median.
	 */
	test.each([
		{
			file: 'bench/results-record-cost.md',
			quotes: [
				[
					'CPU per item within 1\\.1 × of the floor',
					(m: string) => `CPU per item **${m} × the floor** (median`,
				],
				[
					"Throughput at concurrency 50 at least 1\\.5 × HTTP Request's",
					(m: string) => `**${m} × HTTP Request's throughput** (median`,
				],
			],
		},
		{
			file: 'bench/results-key-cost.md',
			quotes: [
				[
					'P1 time with the key at most 1\\.00 × the same run without',
					(m: string) => `P1's time with the key **${m} × without** (median`,
				],
				[
					'P4 CPU per item with the key at most 1\\.25 × without',
					(m: string) => `CPU per item **${m} × without** in P4`,
				],
			],
		},
	] as Array<{ file: string; quotes: Array<[string, (median: string) => string]> }>)(
		"performance.md quotes $file's medians",
		({ file, quotes }) => {
			const results = read(file);
			const page = read('docs/performance.md').replace(/\s+/g, ' ');
			for (const [goal, sentence] of quotes) {
				const median = new RegExp(
					`${goal}\\*\\*: [\\d., ]+ \\(median \\*\\*([\\d.]+)\\*\\*\\)`,
				).exec(results)?.[1];
				expect([goal, median]).not.toEqual([goal, undefined]);
				expect(page).toContain(sentence(median!));
			}
		},
	);

	const results = read('bench/results.md');
	const pick = (
		table: Array<Record<string, string>>,
		where: Record<string, string>,
		column: string,
	): string => {
		const row = table.find((r) => Object.entries(where).every(([k, v]) => r[k] === v));
		if (!row || row[column] === undefined)
			throw new Error(`bench/results.md has no ${column} for ${JSON.stringify(where)}`);
		return row[column];
	};
	const s1 = tableAfter(results, 'S1: one n8n');
	const s2 = tableAfter(results, 'S2: queue mode');
	const redelivery = tableAfter(results, 'Re-delivery');
	const keyCost = tableAfter(results, 'What the key costs');
	const ours = { variant: 'Invoice Service' };
	const http = { variant: 'HTTP Request 4.2' };
	const one = (key: string) => ({ setup: 'one n8n, 20 creates/s', key });
	const queue = (key: string) => ({ setup: 'queue mode, 2 workers × 5', key });
	const noKey = { variant: 'Invoice Service, no key' };
	const fresh = { variant: 'Idempotency Key on both nodes, store fresh' };
	const full = { variant: 'Idempotency Key on both nodes, store full (10,000 keys a node)' };
	const seconds = (cell: string) => String(Math.round(Number(cell)));
	const alreadyCreated = 'answered "already created" (each run)';

	/** Each quote: the page, a pattern whose groups are the figures, and what results.md says they are. */
	const quotes: Array<{ page: string; pattern: RegExp; figures: () => string[] }> = [
		{
			page: 'docs/performance.md',
			pattern: /\*\*(\d+) of (\d+)\*\* in every run/,
			figures: () => pick(s1, ours, 'exactly once').split(' / '),
		},
		{
			page: 'docs/performance.md',
			pattern: /(\d+) of 300 \(lost ([\d, ]+)\)/,
			figures: () => [
				pick(s1, http, 'exactly once').split(' / ')[0],
				pick(s1, http, 'lost (each run)'),
			],
		},
		{
			page: 'docs/performance.md',
			pattern: /\*\*([\d.]+) s = ([\d.]+) ×\*\* the 30 s/,
			figures: () => [pick(s1, ours, 'last invoice (s)'), pick(s1, ours, '÷ bound')],
		},
		{
			page: 'docs/performance.md',
			pattern: /limit off: ([\d.]+) s\)/,
			figures: () => [pick(s1, { variant: 'Invoice Service, the limit off' }, 'last invoice (s)')],
		},
		{
			page: 'docs/performance.md',
			pattern: /\(\d+ of (\d+) creates;/,
			figures: () => [pick(s1, ours, 'create requests')],
		},
		{
			page: 'docs/performance.md',
			pattern: /\*\*(\d+) ms\*\* \(([\d.]+) × HTTP Request\)/,
			figures: () => [pick(s1, ours, 'CPU per event (ms)'), pick(s1, ours, '÷ HTTP Request')],
		},
		{
			page: 'docs/performance.md',
			pattern: /\| ([\d.]+) s \(for the events it did not lose\) \|/,
			figures: () => [pick(s1, http, 'last invoice (s)')],
		},
		{
			page: 'docs/performance.md',
			pattern: /\| events\/s \| \*\*([\d.]+)\*\* .*?\| \*\*([\d.]+)\*\* .*?\| ([\d.]+) \(/,
			figures: () => [
				pick(s2, { setup: '1 worker' }, 'events/s'),
				pick(s2, { setup: '2 workers' }, 'events/s'),
				pick(s2, { setup: '2 workers, 20 creates/s' }, 'events/s'),
			],
		},
		{
			page: 'docs/performance.md',
			pattern: /(\d+) \(key on\) and (\d+) \(key off\) of the 300 events got no invoice/,
			figures: () => [
				pick(redelivery, one('on'), 'lost (each run)'),
				pick(redelivery, one('off'), 'lost (each run)'),
			],
		},
		{
			page: 'docs/performance.md',
			pattern: /timed out saving (\d+) and (\d+) of the 360 executions/,
			figures: () => [
				pick(redelivery, one('on'), 'answered with an error (each run)'),
				pick(redelivery, one('off'), 'answered with an error (each run)'),
			],
		},
		{
			page: 'docs/performance.md',
			pattern: /went to \*Already Created\* in every run \(([\d, ]+)\)/,
			figures: () => [pick(redelivery, queue('on'), alreadyCreated)],
		},
		{
			page: 'docs/performance.md',
			pattern: /after ([\d.]+) s with the key against ([\d.]+) s without \(0/,
			figures: () => [
				pick(redelivery, queue('on'), 'last invoice (s)'),
				pick(redelivery, queue('off'), 'last invoice (s)'),
			],
		},
		{
			page: 'docs/performance.md',
			pattern:
				/after (\d+) s with the key against (\d+) s without \(([\d.]+) ×\), (\d+) s with a full/,
			figures: () => [
				seconds(pick(keyCost, fresh, 'last invoice (s)')),
				seconds(pick(keyCost, noKey, 'last invoice (s)')),
				(
					Number(pick(keyCost, fresh, 'last invoice (s)')) /
					Number(pick(keyCost, noKey, 'last invoice (s)'))
				).toFixed(2),
				seconds(pick(keyCost, full, 'last invoice (s)')),
			],
		},
		{
			page: 'docs/performance.md',
			pattern: /CPU per event (\d+) and (\d+) ms against (\d+) ms/,
			figures: () => [fresh, full, noKey].map((v) => pick(keyCost, v, 'CPU per event (ms)')),
		},
	];

	test.each(quotes.map((quote) => [quote.pattern.source, quote] as const))(
		'%s',
		(_, { page, pattern, figures }) => {
			const match = pattern.exec(flat(read(page)));
			expect([page, match !== null]).toEqual([page, true]);
			expect(match!.slice(1)).toEqual(figures());
		},
	);
});

describe('n8n versions in every page', () => {
	const tested = (JSON.parse(read('tools/n8n/versions.json')) as { tested: string[] }).tested;

	test('an "n8n x.y.z" of a tested major is a tested version, or where a feature began ("… and later")', () => {
		const majors = new Set(tested.map((version) => version.split('.')[0]));
		const untested = PAGES.filter((page) => page !== 'CHANGELOG.md').flatMap((page) =>
			[...flat(read(page)).matchAll(/\bn8n \**(\d+)\.(\d+)\.(\d+)\**(?! and later| or later)/g)]
				.map(([, ...parts]) => parts.join('.'))
				.filter((version) => majors.has(version.split('.')[0]) && !tested.includes(version))
				.map((version) => `${page}: n8n ${version} (tested: ${tested.join(', ')})`),
		);
		expect(untested).toEqual([]);
	});
});

describe('messages quoted in the docs, against the code that builds them', () => {
	const trimPunctuation = (text: string) => text.replace(/^[\s,.:;")]+|[\s,.:;"(]+$/g, '');
	/** Every .ts file of the node and the credential, with its text. */
	const sources = ['nodes', 'credentials'].flatMap((dir) =>
		fs
			.readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.ts'))
			.map((file) => read(path.join(dir, file))),
	);
	const LITERAL = /'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`]*)`/g;
	/** A literal's fixed texts: a template literal split at its `${…}`. */
	const fixedTexts = ([, single, double, template]: RegExpMatchArray): string[] =>
		(single ?? double ?? template.split(/\$\{[^}]*\}/).join('\u0000'))
			.split('\u0000')
			.map((text) => trimPunctuation(text.replace(/\\(.)/g, '$1')))
			.filter((text) => text.length >= 4);
	/** The fixed text of every string the node's code writes. */
	const texts = sources
		.flatMap((source) => [...source.matchAll(LITERAL)].flatMap(fixedTexts))
		.sort((a, b) => b.length - a.length);
	/**
	 * The texts that are only ever the middle or end of a message: a constant that the code uses only inside
	 * other strings, after some text (`… ${UNKNOWN_OUTCOME}`), never as a message or description of its own.
	 */
	const middles = sources.flatMap((source) =>
		[...source.matchAll(/^(?:export )?const (\w+) =\s*('(?:[^'\\\n]|\\.)*'|`[^`]*`)/gm)]
			.filter(([, name]) => {
				const uses = sources.flatMap((text) => [
					...text.matchAll(new RegExp(`(\`)?(\\$\\{)?\\b${name}\\b`, 'g')),
				]);
				const bare = uses.filter(([, , interpolated]) => !interpolated).length;
				const first = uses.filter(([, tick, interpolated]) => tick && interpolated).length;
				// Its declaration, then only `${name}` after other text.
				return uses.length > bare && bare === 1 && first === 0;
			})
			.flatMap(([, , literal]) => [...literal.matchAll(LITERAL)].flatMap(fixedTexts).slice(0, 1)),
	);

	/** What is left of a quote once every fixed text of the code found in it is taken out: values, "…". */
	function leftOver(quote: string): string {
		let rest = quote;
		for (const text of texts) if (text.length >= 8) rest = rest.split(text).join(' ');
		return rest;
	}

	/** Quotes on these pages that are other programs' words, not the node's. */
	const NOT_THE_NODE = [
		/^Unrecognized node type/, // n8n's
		/^Postgres 15 is not supported/, // n8n's
		/^Installed community packages/, // n8n's
		/^Create an invoice in Invoice Service$/, // n8n's automatic tool description
		/^Write Binary File$/, // an n8n node
		/^[A-Z_ ]+$/, // SQL, variable names
	];
	/**
	 * A quoted message: text in backticks or double quotes with three words or more that starts like a message (a
	 * capital, "Item", or "…"), outside code blocks; not a workflow (→), a name, a path or an expression.
	 */
	const quotes = [...FACT_PAGES, 'examples/README.md'].flatMap((page) =>
		[...flat(read(page).replace(/```[\s\S]*?```/g, '')).matchAll(/`([^`]+)`|"([^"]+)"|“([^”]+)”/g)]
			.map(([, code, double, curly]) => (code ?? double ?? curly).trim())
			.filter((quote) => (quote.match(/[A-Za-z']{2,}/g) ?? []).length >= 3)
			.filter(
				(quote) => /^[A-Z…]/.test(quote) && !/[→$=]|\{\{|https?:|\.ts\b|^[\w.-]+$/.test(quote),
			)
			.filter((quote) => !NOT_THE_NODE.some((words) => words.test(quote)))
			.map((quote) => ({ page, quote })),
	);
	const table = read('docs/reference.md').split('## Errors and what to do')[1].split('\n## ')[0];

	test("reference.md's error table and the other pages quote messages", () => {
		expect([...table.matchAll(/^\| `([^`]+)`/gm)].length).toBeGreaterThanOrEqual(10);
		expect(quotes.length).toBeGreaterThanOrEqual(25);
	});

	test.each(quotes.map(({ page, quote }) => [page, quote]))(
		'%s: "%s" is what the code writes (only values differ)',
		(_, quote) => {
			// Each part between "…" (or a <placeholder>) is a piece of one string of the code, or strings of the code
			// with values between them: three words in a row that no string of the code holds are wording the code
			// does not write.
			const parts = quote.split(/…|<[^>]+>/).map(trimPunctuation);
			const unwritten = parts
				.filter((part) => part && !texts.some((text) => text.includes(part)))
				.map(leftOver)
				.filter((rest) => /[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}/.test(rest));
			expect(unwritten).toEqual([]);
			// A quote that does not start with "…" starts where a message starts: not with a text the code only
			// ever puts after the start of another (a message is quoted from its beginning, or with "…").
			const first = parts[0];
			const startsMidway =
				!quote.startsWith('…') &&
				first.length >= 8 &&
				middles.some((middle) => middle.startsWith(first.slice(0, 24))) &&
				!texts.some((text) => !middles.includes(text) && text.startsWith(first.slice(0, 24)));
			expect([quote, startsMidway ? 'starts in the middle of a message' : 'ok']).toEqual([
				quote,
				'ok',
			]);
		},
	);
});

describe('figures quoted with a results file, against that file', () => {
	/** Every number of a text, as written ("1,453", "0.98"). */
	const numbers = (text: string) => [...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map(([n]) => n);
	const value = (written: string) => Number(written.replace(/,/g, ''));
	const decimals = (written: string) => written.split('.')[1]?.length ?? 0;
	/**
	 * The figures a section quotes: decimals and thousands ("0.85", "1,453"), in the prose and tables, not in code
	 * spans, versions ("2.41.1"), dates or times of day.
	 */
	function figures(section: string): string[] {
		const prose = section
			.replace(/`[^`]*`/g, ' ')
			.replace(/\]\([^)]*\)/g, '] ')
			.replace(/\b\d+\.\d+\.\d+\b|\b20\d\d-\d\d-\d\d\b|\b\d\d:\d\d\b/g, ' ');
		return numbers(prose).filter((n) => n.includes('.') || n.includes(','));
	}
	/** Each section (a heading and what follows, up to the next heading) that links to a results file. */
	const sections = FACT_PAGES.flatMap((page) =>
		read(page)
			.split(/^(?=#{1,6} )/m)
			.map((section) => ({
				page,
				heading: section.split('\n')[0],
				files: [
					...new Set(
						[...section.matchAll(/\]\(([^)#]*results[\w-]*\.md)/g)].map(([, link]) =>
							path.join(path.dirname(page), link),
						),
					),
				],
				figures: figures(section),
			}))
			.filter(({ files }) => files.length > 0),
	);

	test('performance.md cites its results files', () => {
		expect(
			sections.filter(({ page }) => page === 'docs/performance.md').length,
		).toBeGreaterThanOrEqual(2);
	});

	test.each(sections.map((section) => [`${section.page} ${section.heading}`, section] as const))(
		'%s: every figure is in a results file it cites',
		(_, { files, figures: quoted }) => {
			const measured = files.flatMap((file) => numbers(read(file)).map(value));
			// A figure may be rounded from the file's (1.27 from 1.272; 30.5 from 30.53).
			const missing = quoted.filter((written) => {
				const scale = 10 ** decimals(written);
				return !measured.some((n) => Math.round(n * scale) === Math.round(value(written) * scale));
			});
			expect([files, missing]).toEqual([files, []]);
		},
	);
});

describe('one page against another, on the rules above', () => {
	const pages = [...FACT_PAGES, 'examples/README.md'];

	/** A sentence that says the Test button does not apply a rule ("does not apply", "only the node checks"). */
	const DENIES =
		/\b(does not|doesn't|never|not by the Test)\b[^.]*\b(apply|applies|check|checks|refuse|refuses|refused)\b|\bonly the node\b/i;
	/** Whether each sentence about the Test button and plain http says the Test applies the plain-HTTP rule. */
	const testButtonPlainHttp = (page: string): Claim[] =>
		sentences(page)
			.filter(
				(s) =>
					/Test button|the Test\b/.test(s) && /plain[- ]HTTP|plain `?http|`http:\/\/`/i.test(s),
			)
			.map((s) => ({
				page,
				topic: 'the Test button applies the plain-HTTP rule',
				says: DENIES.test(s) ? 'no' : 'yes',
			}));

	test('the Test button and plain http: every page says what the credential does (it applies the rule)', async () => {
		// The credential's authenticate() runs for every request that carries the key, the Test's included.
		await expect(
			new InvoiceServiceApi().authenticate(
				{ baseUrl: 'http://example.com', apiKey: 'key-1234', allowHttp: false },
				{ url: 'http://example.com/api/1.1/wf/create-customer', method: 'POST' },
			),
		).rejects.toThrow(/plain http:\/\//);
		const claims = pages.flatMap(testButtonPlainHttp);
		expect(claims.filter((claim) => claim.page === 'README.md').length).toBeGreaterThan(0);
		expect(
			disagreements([...claims, { page: 'the credential', topic: claims[0].topic, says: 'yes' }]),
		).toEqual([]);
	});

	test("the answer limit: every page quotes the same size, the code's", () => {
		const claims = pages.flatMap((page) =>
			sentences(page)
				.filter((s) => /\banswers?\b/i.test(s))
				.flatMap((s) => [...s.matchAll(/\b(\d+) KB\b/g)])
				.map(([, kb]) => ({ page, topic: 'the answer limit (KB)', says: kb })),
		);
		expect(claims.length).toBeGreaterThan(1);
		expect(
			disagreements([
				...claims,
				{
					page: 'transport/body.ts',
					topic: 'the answer limit (KB)',
					says: String(MAX_ANSWER_BYTES / 1024),
				},
			]),
		).toEqual([]);
	});

	test('this check finds two pages that disagree, naming both', () => {
		expect(
			disagreements([
				{ page: 'README.md', topic: 'Timeout (Ms) default', says: '60000' },
				{ page: 'docs/reference.md', topic: 'Timeout (Ms) default', says: '30000' },
				{ page: 'docs/install.md', topic: 'Timeout (Ms) default', says: '60000' },
			]),
		).toEqual([
			'Timeout (Ms) default: "60000" (README.md, docs/install.md) vs "30000" (docs/reference.md)',
		]);
		const said = (sentence: string) => DENIES.test(sentence);
		expect(
			said(
				'The Test button does not apply the plain-HTTP rule; the node does, before sending anything.',
			),
		).toBe(true);
		expect(
			said(
				'A plain http:// Base URL is refused, by the node and by the Test button, before anything is sent.',
			),
		).toBe(false);
	});
});

describe('counts and limits the docs state, against the code', () => {
	const WORDS = [
		'zero',
		'one',
		'two',
		'three',
		'four',
		'five',
		'six',
		'seven',
		'eight',
		'nine',
		'ten',
	];

	test('"N things live at module level": the count and the names, against the modules\' own state', () => {
		// A module's state: a top-level `const x = new …` other than a fixed Set of constants, or a process's keys
		// (`keysProcess()`: its Maps).
		const state = fs
			.readdirSync(path.join(REPO_ROOT, 'nodes'), { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.ts'))
			.flatMap((file) => [
				...read(path.join('nodes', file)).matchAll(
					/^(?:export )?const (\w+)\b[^=\n]*= (?:new (?!Set\b|RegExp\b)\w+|keysProcess\()/gm,
				),
			])
			.map(([, name]) => name)
			.sort();
		const page = read('docs/how-it-works.md');
		const said = /(\w+) things live at module level/i.exec(page)?.[1].toLowerCase();
		expect(said).toBe(WORDS[state.length]);
		const table = page.split(/things live at module level/)[1].split('\n\n')[1];
		// "`a` in `file`", "`a` and `b` in `file`", "`a`, `b` and `c` in `file`".
		const named = [/`(\w+)` in `/g, /`(\w+)` and `\w+` in `/g, /`(\w+)`, `\w+`/g]
			.flatMap((pattern) => [...table.matchAll(pattern)])
			.map(([, name]) => name)
			.sort();
		expect([...new Set(named)]).toEqual(state);
	});

	/** A stated number, the page and sentence that state it, and the code's value. */
	const stated: Array<[page: string, pattern: RegExp, actual: number]> = [
		['docs/reference.md', /One request is sent at most (\d+) times/, MAX_SENDS],
		['docs/reference.md', /Every wait is at least (\d+) s/, MIN_RETRY_WAIT_MS / 1000],
		[
			'docs/reference.md',
			/Requests that start within (\d+) ms of each other share one deadline/,
			WINDOW_MS,
		],
		['docs/reference.md', /\*Timeout\* \+ (\d+) ms after it started/, WINDOW_MS],
		['docs/reference.md', /At most (\d+) services/, MAX_SERVICES],
		['docs/reference.md', /dropped once idle for more than (\d+) s/, IDLE_MS / 1000],
		[
			'docs/how-it-works.md',
			/a claim that waited (\d+) s for it fails/,
			lockTiming.maxWaitMs / 1000,
		],
		[
			'docs/how-it-works.md',
			/lock seen unchanged for (\d+) s/,
			(lockTiming.markAfterMs + lockTiming.leaseMs) / 1000,
		],
		[
			'docs/how-it-works.md',
			/A waiter that has watched the lock for (\d+) s/,
			lockTiming.markAfterMs / 1000,
		],
		[
			'docs/how-it-works.md',
			/at most (\d+) s, and doubled after each collision/,
			lockTiming.breakJitterMaxMs / 1000,
		],
		[
			'docs/how-it-works.md',
			/blocks the claims waiting for it at most (\d+) s/,
			FREE_BLOCK_MS / 1000,
		],
		['docs/how-it-works.md', /\| held-up \| (\d+) s \|/, BOUNDS.heldUp.ms / 1000],
		[
			'docs/how-it-works.md',
			/has then watched the same count, unchanged, for (\d+) s more/,
			lockTiming.leaseMs / 1000,
		],
		[
			'docs/how-it-works.md',
			/\| write-late \| (\d+) s \|/,
			(lockTiming.leaseMs + lockTiming.graceMs - lockTiming.writeMs) / 1000,
		],
		[
			'docs/how-it-works.md',
			/\| delete-late \| (\d+) s \|/,
			(lockTiming.leaseMs + lockTiming.graceMs - lockTiming.releaseMs) / 1000,
		],
		['docs/how-it-works.md', /\| take-late \| (\d+) s \|/, lockTiming.graceMs / 1000],
		['docs/how-it-works.md', /\| write-late \| (\d+) s \|/, BOUNDS.writeLate.ms / 1000],
		['docs/how-it-works.md', /\| delete-late \| (\d+) s \|/, BOUNDS.deleteLate.ms / 1000],
		['docs/how-it-works.md', /a holder writes only within (\d+) s/, lockTiming.writeMs / 1000],
		['docs/how-it-works.md', /deletes its\s+lock only within (\d+) s/, lockTiming.releaseMs / 1000],
		[
			'docs/how-it-works.md',
			/\s(\d+) s later, the row holds its identity/,
			lockTiming.graceMs / 1000,
		],
		['docs/reference.md', /Each list names the first (\d+) items/, LISTED],
		[
			'docs/reference.md',
			/no try starts later than \*Max Retry Wait\* \+ (\d+) s/,
			LAST_TRY_AFTER_MS / 1000,
		],
	];

	test.each(
		stated.map(([page, pattern, actual]) => [page, pattern.source, pattern, actual] as const),
	)('%s: "%s" says what the code does', (page, _, pattern, actual) => {
		const match = pattern.exec(flat(read(page)));
		expect([pattern.source, match !== null]).toEqual([pattern.source, true]);
		const quoted = match![1] === 'a' ? 1 : Number(match![1]);
		expect([pattern.source, quoted]).toEqual([pattern.source, actual]);
	});
});

describe('test times and counts', () => {
	test("the README's test times are development.md's measurements, in minutes", () => {
		const readme = flat(read('README.md'));
		const development = flat(read('docs/development.md'));
		const minutes = /It took (\d+) minutes\*\*.*? and (\d+) from nothing/.exec(readme);
		const secs = /took ([\d,]+) s in all \(.*?`npm test` ([\d,]+) s/.exec(development);
		expect(minutes).not.toBeNull();
		expect(secs).not.toBeNull();
		const inMinutes = (s: string) => String(Math.round(Number(s.replace(/,/g, '')) / 60));
		expect(minutes!.slice(1)).toEqual([inMinutes(secs![2]), inMinutes(secs![1])]);
	});

	test('no page gives a test time or count it does not date ("~20 s", "N tests" outside a measurement)', () => {
		const undated = FACT_PAGES.flatMap((page) =>
			[...flat(read(page)).matchAll(/[^.]*(?:~\s?\d+ ?s\b|\b\d[\d,]* tests\b)[^.]*/g)]
				.map(([sentence]) => sentence)
				.filter((sentence) => !/\b20\d\d-\d\d-\d\d\b|\bbefore issues?\b/.test(sentence))
				.map((sentence) => `${page}: "${sentence.trim()}"`),
		);
		expect(undated).toEqual([]);
	});
});
