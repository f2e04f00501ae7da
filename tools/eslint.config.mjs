// ESLint for everything that is not shipped (tools/, test/, scripts/, bench/, sandbox/): the node's own
// TypeScript rules (@n8n/node-cli's config) without the community-node rules, which are about code that runs
// inside n8n and so apply to nodes/ and credentials/ only; console output is what these programs are for.
// `npm run lint` sets ESLINT_FLAGS=unstable_config_lookup_from_file, so ESLint takes the config nearest to
// each file: this one (re-exported by each folder's eslint.config.mjs) here, the root's strict one elsewhere.
import { config } from '@n8n/node-cli/eslint';

const SHIPPED_CODE_RULE = /^(@n8n\/community-nodes|n8n-nodes-base)\//;

export default [
	...config.map(({ rules, ...block }) => ({
		...block,
		rules: Object.fromEntries(
			Object.entries(rules ?? {}).filter(([name]) => !SHIPPED_CODE_RULE.test(name)),
		),
	})),
	{
		files: ['**/*.ts'],
		rules: {
			'no-console': 'off',
			// import-x resolves `node:` modules against the Node.js running ESLint. node:sqlite (the benchmark's
			// reader of n8n's database, run on Node 24 by `npm run bench`) is built in from Node 22.5 only, so on the
			// Node 20.15 the README names for building, lint would fail on a module that exists where the code runs.
			'import-x/no-unresolved': ['error', { ignore: ['^node:sqlite$'] }],
		},
	},
];
