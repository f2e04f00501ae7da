// Installs the bench floor (BenchFloor.node.ts) into an n8n user folder as a community package of its own,
// loaded the same way as the Invoice Service package: `<nodesDir>/node_modules/n8n-nodes-bench-floor`.
// It is compiled here, at bench time, so it never reaches dist/ or the published tarball.
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

export const FLOOR_PACKAGE = 'n8n-nodes-bench-floor';
export const FLOOR_NODE_TYPE = `${FLOOR_PACKAGE}.benchFloor`;

export function installFloor(nodesDir: string): void {
	const source = fs.readFileSync(path.join(__dirname, 'BenchFloor.node.ts'), 'utf8');
	const { outputText } = ts.transpileModule(source, {
		compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
	});
	const packageDir = path.join(nodesDir, 'node_modules', FLOOR_PACKAGE);
	fs.mkdirSync(packageDir, { recursive: true });
	// n8n takes the class name from the file name (BenchFloor.node.js → class BenchFloor).
	fs.writeFileSync(path.join(packageDir, 'BenchFloor.node.js'), outputText);
	fs.writeFileSync(
		path.join(packageDir, 'package.json'),
		JSON.stringify({
			name: FLOOR_PACKAGE,
			version: '1.0.0',
			private: true,
			n8n: { n8nNodesApiVersion: 1, nodes: ['BenchFloor.node.js'], credentials: [] },
		}),
	);
	const registryFile = path.join(nodesDir, 'package.json');
	const registry = JSON.parse(fs.readFileSync(registryFile, 'utf8')) as {
		dependencies: Record<string, string>;
	};
	registry.dependencies[FLOOR_PACKAGE] = '1.0.0';
	fs.writeFileSync(registryFile, JSON.stringify(registry, null, 2));
}
