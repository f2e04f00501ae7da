// `npm run verify`: the package against n8n's community node verification guidelines. Every requirement the
// package itself can meet passes; the fields only the real repository can fill are reported open, by name,
// without failing. A copy of the package that breaks the rules is caught, line by line.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { REPO_ROOT } from '../../tools/n8n';

interface Item {
	title: string;
	status: 'pass' | 'open';
	detail: string;
	repositoryOnly: boolean;
}

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'verify-ready.mjs');
const verify = (root: string, ...flags: string[]) => {
	const result = spawnSync('node', [SCRIPT, root, ...flags], { encoding: 'utf8' });
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
};
const itemsOf = (root: string) => {
	const result = verify(root, '--json');
	return { code: result.code, items: (JSON.parse(result.stdout) as { items: Item[] }).items };
};

let tempRoot: string;
beforeAll(() => {
	tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-service-verify-'));
});
afterAll(() => fs.rmSync(tempRoot, { recursive: true, force: true }));

test('the package: every requirement it can meet passes; repository and author are open, named', () => {
	const { code, items } = itemsOf(REPO_ROOT);
	expect(code).toBe(0);
	expect(items.filter((item) => !item.repositoryOnly && item.status !== 'pass')).toEqual([]);
	expect(items.filter((item) => !item.repositoryOnly).map((item) => item.title)).toEqual(
		expect.arrayContaining([
			'Built with the n8n node CLI (n8n-node)',
			'No runtime dependencies',
			'License MIT',
			'No environment or file-system access in the node',
			'Published from a GitHub Actions workflow with npm provenance',
		]),
	);
	// Placeholders today (issue 23 asks that they are named until the real repository exists).
	const fields = items.find((item) => item.repositoryOnly)!;
	expect(fields.status).toBe('open');
	for (const name of ['repository: missing', 'author.email: "maintainers@', '.invalid"']) {
		expect(fields.detail).toContain(name);
	}

	const text = verify(REPO_ROOT).stdout;
	expect(text).toContain('  open  Repository, bugs, homepage and author');
	expect(text).toContain('(only the real repository can fill this)');
	expect(text.trim().split('\n').at(-1)).toMatch(
		/^\d+ pass, 1 open \(1 for the real repository\)$/,
	);
});

test('a copy that breaks the rules fails, each broken requirement named', () => {
	const copy = fs.mkdtempSync(path.join(tempRoot, 'broken-'));
	for (const entry of ['package.json', 'LICENSE.md', 'README.md', 'eslint.config.mjs', 'nodes']) {
		fs.cpSync(path.join(REPO_ROOT, entry), path.join(copy, entry), { recursive: true });
	}
	const pkg = JSON.parse(fs.readFileSync(path.join(copy, 'package.json'), 'utf8')) as Record<
		string,
		unknown
	>;
	fs.writeFileSync(
		path.join(copy, 'package.json'),
		JSON.stringify({ ...pkg, license: 'Apache-2.0', dependencies: { axios: '1.0.0' } }),
	);
	fs.writeFileSync(
		path.join(copy, 'nodes/InvoiceService/helpers/leak.ts'),
		"import { readFileSync } from 'node:fs';\nexport const key = process.env.API_KEY ?? readFileSync('key');\n",
	);
	fs.writeFileSync(
		path.join(copy, 'README.md'),
		'# Rechnungen\n\n## Installieren\n\nDie Rechnung wird mit dem Kunden an die Adresse der Firma geschickt, und der Betrag ist in Cent.\n',
	);

	const { code, items } = itemsOf(copy);
	expect(code).toBe(1);
	const open = Object.fromEntries(
		items.filter((item) => item.status === 'open').map((item) => [item.title, item.detail]),
	);
	expect(open['No runtime dependencies']).toBe('dependencies: axios');
	expect(open['License MIT']).toContain('"Apache-2.0", not "MIT"');
	expect(open['No environment or file-system access in the node']).toBe(
		'nodes/InvoiceService/helpers/leak.ts:1 uses the fs module; nodes/InvoiceService/helpers/leak.ts:2 uses process.env',
	);
	expect(
		open['README in English, with installation, credentials, usage and example workflows'],
	).toMatch(/does not read as English.*no section on credentials.*no example workflow/);
	expect(open['Published from a GitHub Actions workflow with npm provenance']).toContain(
		'no workflow in .github/workflows',
	);
	expect(open).not.toHaveProperty(['Built with the n8n node CLI (n8n-node)']);
});
