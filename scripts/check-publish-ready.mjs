#!/usr/bin/env node
// Refuses a release while package.json still holds placeholders where npm and n8n need the project's real
// values. npm refuses a provenance publish without `repository` (it must name the GitHub repository the
// publish workflow runs in), and n8n's verification shows author, homepage and bugs to users.
// Run by `npm run release` and by `prepublishOnly` (so by `npm publish`). Usage: node check-publish-ready.mjs
// [path/to/package.json]; exit 0 when ready, 1 with the list of what to set otherwise. Plain Node, no
// dependencies: it must run before anything else of the release.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const file = resolve(process.argv[2] ?? 'package.json');
const pkg = JSON.parse(readFileSync(file, 'utf8'));

/** Host names reserved for examples and tests (RFC 2606, RFC 6761): never a real address. */
const RESERVED_HOST = /(^|\.)(example\.(com|org|net)|invalid|example|test|localhost)$/i;
/** Text left by templates: `<...>`, `your-repo`, TODO, CHANGEME, placeholder, "…". */
const TEMPLATE_TEXT = /<[^>]*>|\.\.\.|…|\byour[-_ ]|\bTODO\b|CHANGEME|placeholder/i;

/** Why a URL is not a real one, or undefined when it looks real. */
function urlProblem(value) {
	if (typeof value !== 'string' || value.trim() === '') return 'missing';
	if (TEMPLATE_TEXT.test(value)) return `"${value}" is a template placeholder`;
	let url;
	try {
		url = new URL(value.replace(/^git\+/, ''));
	} catch {
		return `"${value}" is not a URL`;
	}
	if (!/^https?:$/.test(url.protocol)) return `"${value}" is not an https URL`;
	if (RESERVED_HOST.test(url.hostname)) return `"${value}" uses a reserved example host`;
	return undefined;
}

/** npm accepts these fields as a string or as an object holding the URL. */
const urlOf = (field, key = 'url') =>
	typeof field === 'string' ? field : field && typeof field === 'object' ? field[key] : undefined;

const problems = [];

const repositoryUrl = urlOf(pkg.repository);
const repositoryProblem = urlProblem(repositoryUrl);
if (repositoryProblem) {
	problems.push(
		`repository: ${repositoryProblem}. Set {"type": "git", "url": "git+https://github.com/OWNER/REPO.git"}, the GitHub repository the publish workflow runs in (npm refuses a provenance publish without it).`,
	);
} else if (!/^(git\+)?https:\/\/[^/]+\/[^/]+\/[^/]+?(\.git)?\/?$/.test(repositoryUrl)) {
	problems.push(
		`repository: "${repositoryUrl}" does not name one repository. Use "git+https://github.com/OWNER/REPO.git".`,
	);
}

const bugsProblem = urlProblem(urlOf(pkg.bugs));
if (bugsProblem) {
	problems.push(
		`bugs: ${bugsProblem}. Set {"url": "https://github.com/OWNER/REPO/issues"}, where users report problems.`,
	);
}

let homepageProblem = urlProblem(pkg.homepage);
if (!homepageProblem && /(^|\.)npmjs\.(com|org)$/i.test(new URL(pkg.homepage).hostname)) {
	homepageProblem = `"${pkg.homepage}" is the npm page itself, not the project's`;
}
if (homepageProblem) {
	problems.push(
		`homepage: ${homepageProblem}. Set the project's page, e.g. "https://github.com/OWNER/REPO#readme".`,
	);
}

// author: "Name <email> (url)" or { name, email, url }.
const author =
	typeof pkg.author === 'string'
		? {
				name: pkg.author.replace(/[<(].*$/, '').trim(),
				email: /<([^>]*)>/.exec(pkg.author)?.[1],
				url: /\(([^)]*)\)/.exec(pkg.author)?.[1],
			}
		: (pkg.author ?? {});
// A name made of the package's own name ("<package> maintainers") stands in for a person or organisation.
const isStandIn = (name) =>
	TEMPLATE_TEXT.test(name) || name.toLowerCase().includes(String(pkg.name).toLowerCase());
if (typeof author.name !== 'string' || author.name.trim() === '' || isStandIn(author.name)) {
	problems.push(
		`author.name: ${author.name ? `"${author.name}" is a placeholder` : 'missing'}. Set the publishing person's or organisation's name.`,
	);
}
if (author.email !== undefined) {
	const host = String(author.email).split('@')[1] ?? '';
	if (
		!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(author.email) ||
		RESERVED_HOST.test(host) ||
		TEMPLATE_TEXT.test(author.email)
	) {
		problems.push(
			`author.email: "${author.email}" is a placeholder. Set a real address, or remove it.`,
		);
	}
}
if (author.url !== undefined && urlProblem(author.url)) {
	problems.push(`author.url: ${urlProblem(author.url)}. Set a real page, or remove it.`);
}

if (problems.length > 0) {
	console.error(
		[
			`Not ready to publish: ${file} still holds placeholders. Set these to the project's real values:`,
			...problems.map((problem) => `  - ${problem}`),
			'See "Releasing" in docs/development.md.',
		].join('\n'),
	);
	process.exit(1);
}
console.log(`Ready to publish: repository, bugs, homepage and author are set in ${file}.`);
