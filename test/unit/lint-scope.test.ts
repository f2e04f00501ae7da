// The community-node lint rules are about code that runs inside n8n: `npm run lint` must apply them to nodes/
// and credentials/ and keep them off the tools and tests (which use process, timers, node: imports and the
// console freely, with no eslint-disable header). Asked of ESLint itself, with the lint script's own flags.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from '../../tools/n8n/project';

const lintScript = (
	JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
		scripts: Record<string, string>;
	}
).scripts.lint;

const PROBES = {
	shipped: ['nodes/InvoiceService/Any.ts', 'credentials/Any.credentials.ts'],
	tools: [
		'test/unit/Any.test.ts',
		'test/support/Any.ts',
		'tools/n8n/Any.ts',
		'scripts/Any.ts',
		'bench/Any.ts',
		'sandbox/Any.ts',
	],
};

/** The rules ESLint enables for each file (they need not exist), as `npm run lint` runs it: one ESLint boot. */
function enabledRules(files: string[]): Record<string, string[]> {
	const flags = /ESLINT_FLAGS=(\S+)/.exec(lintScript)?.[1] ?? '';
	const script = `
		const { ESLint } = require('eslint');
		(async () => {
			const eslint = new ESLint({ flags: ${JSON.stringify(flags ? flags.split(',') : [])} });
			const out = {};
			for (const file of ${JSON.stringify(files)}) {
				const { rules } = await eslint.calculateConfigForFile(file);
				out[file] = Object.keys(rules).filter((name) => ![0, 'off'].includes([rules[name]].flat()[0]));
			}
			process.stdout.write(JSON.stringify(out));
		})();`;
	return JSON.parse(
		execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' }),
	) as Record<string, string[]>;
}

const rulesByFile = enabledRules([...PROBES.shipped, ...PROBES.tools]);

const communityRules = (rules: string[]) =>
	rules.filter((name) => /^(@n8n\/community-nodes|n8n-nodes-base)\//.test(name));

describe('lint scope', () => {
	it('runs n8n-node lint', () => {
		expect(lintScript).toMatch(/\bn8n-node lint$/);
	});

	it.each(PROBES.shipped)('applies the community-node rules to shipped code (%s)', (file) => {
		const rules = rulesByFile[file];
		expect(rules).toContain('@n8n/community-nodes/no-restricted-globals');
		expect(rules).toContain('@n8n/community-nodes/no-restricted-imports');
		expect(rules).toContain('no-console');
	});

	it.each(PROBES.tools)(
		'keeps them off tools and tests, TypeScript rules still on (%s)',
		(file) => {
			const rules = rulesByFile[file];
			expect(communityRules(rules)).toEqual([]);
			expect(rules).not.toContain('no-console');
			expect(rules).toContain('@typescript-eslint/no-explicit-any');
		},
	);
});
