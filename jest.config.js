// One jest run, several projects: `unit` (pure helpers), `workflow` (the node inside n8n-core's
// WorkflowExecute, HTTP intercepted by nock), `e2e` (a real n8n against the sandbox).
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.dev.json', diagnostics: { warnOnly: false } }];
const base = { testEnvironment: 'node', testTimeout: 30000, transform: { '^.+\\.ts$': tsJest }, modulePathIgnorePatterns: ['<rootDir>/dist/'] };

module.exports = {
	projects: [
		{ ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'], setupFilesAfterEnv: ['<rootDir>/test/setup/no-network.js'] },
		{ ...base, displayName: 'workflow', testMatch: ['<rootDir>/test/workflow/**/*.test.ts'], setupFiles: ['<rootDir>/test/setup/workflow-env.js'], setupFilesAfterEnv: ['<rootDir>/test/setup/no-network.js'] },
		{ ...base, displayName: 'sandbox', testMatch: ['<rootDir>/test/sandbox/**/*.test.ts'] },
		{ ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
	],
};
