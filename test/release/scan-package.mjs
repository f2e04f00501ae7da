// Runs the analysis of n8n's community package scanner (@n8n/scan-community-package, the gate of n8n's
// verification) on two folders, offline, and prints one JSON line with every finding.
// Usage: node scan-package.mjs <unpacked tarball> <source root>
// The scanner's own entry (analyzePackageByName) downloads the published tarball and the GitHub source its npm
// provenance names; its analysis then lints the tarball's compiled .js + package.json, and the source's
// package.json + nodes/ + credentials/. This does the same two legs on local folders with the scanner's config
// (buildScanConfig) and the same ESLint options, and counts warnings too (the scanner fails on errors only).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const scannerPath = require.resolve('@n8n/scan-community-package/scanner/scanner.mjs');
const scanner = await import(scannerPath);
// The ESLint the scanner itself resolves, so that the config and the engine match.
const { ESLint } = createRequire(scannerPath)('eslint');
const glob = createRequire(scannerPath)('fast-glob');

async function lint(cwd, patterns) {
	const eslint = new ESLint({
		cwd,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: await scanner.buildScanConfig(),
	});
	const files = glob.sync(patterns, {
		cwd,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	const results = await eslint.lintFiles(files);
	return {
		files: files.map((file) => file.slice(cwd.length + 1)).sort(),
		errors: results.reduce((sum, result) => sum + result.errorCount, 0),
		warnings: results.reduce((sum, result) => sum + result.warningCount, 0),
		messages: results.flatMap((result) =>
			result.messages.map(
				(message) =>
					`${result.filePath.slice(cwd.length + 1)}:${message.line} ${message.ruleId}: ${message.message}`,
			),
		),
	};
}

const [tarballDir, sourceDir] = process.argv.slice(2);
const report = {
	tarball: await lint(tarballDir, ['**/*.js', 'package.json']),
	source: await lint(sourceDir, scanner.SOURCE_FILE_PATTERNS),
	// The scanner's own verdict on the tarball leg (errors only), as analyzePackage returns it.
	verdict: await scanner.analyzePackage(tarballDir, ['**/*.js', 'package.json']),
};
process.stdout.write(`${JSON.stringify(report)}\n`);
