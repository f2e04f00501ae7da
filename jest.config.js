// One jest run, several projects: `unit` (pure helpers), `workflow` (the node inside n8n-core's
// WorkflowExecute, HTTP intercepted by nock), `e2e` (a real n8n against the sandbox).
// ts-jest only transpiles each file (tsconfig.jest.json: isolatedModules): `npm run typecheck` checks the types of
// every test, and checking them again file by file in jest cost about 5 s a file on a cold cache
// (bench/results-ci.md).
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.jest.json' }];
const base = {
	testEnvironment: 'node',
	transform: { '^.+\\.ts$': tsJest },
	modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

module.exports = {
	// Global only (jest ignores it inside a project): n8n-core's first load takes seconds on a busy 2-core machine.
	testTimeout: 60000,
	testSequencer: '<rootDir>/test/setup/sequencer.js',
	projects: [
		{
			...base,
			displayName: 'unit',
			testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
			setupFilesAfterEnv: ['<rootDir>/test/setup/no-network.js'],
		},
		{
			...base,
			displayName: 'workflow',
			testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
			setupFiles: ['<rootDir>/test/setup/workflow-env.js'],
			setupFilesAfterEnv: [
				'<rootDir>/test/setup/no-network.js',
				'<rootDir>/test/setup/fresh-pace.ts',
			],
		},
		{ ...base, displayName: 'sandbox', testMatch: ['<rootDir>/test/sandbox/**/*.test.ts'] },
		{ ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
		{ ...base, displayName: 'mcp', testMatch: ['<rootDir>/test/e2e-mcp/**/*.test.ts'] },
		{ ...base, displayName: 'release', testMatch: ['<rootDir>/test/release/**/*.test.ts'] },
		{ ...base, displayName: 'queue', testMatch: ['<rootDir>/test/e2e-scale/**/*.test.ts'] },
		{
			...base,
			displayName: 'resilience',
			testMatch: ['<rootDir>/test/resilience/**/*.test.ts'],
			setupFiles: ['<rootDir>/test/setup/workflow-env.js'],
			setupFilesAfterEnv: ['<rootDir>/test/setup/fresh-pace.ts'],
		},
		{ ...base, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.test.ts'] },
	],
};
