// The README's install path before the first npm release, followed to the letter: its commands are read from the
// README's "Install in n8n" section and run as written (the tarball built and packed, then `npm install`ed into
// `~/.n8n/nodes` of a fresh user folder), and a real n8n started on that folder must offer the node. A change to
// the README's commands is a change to what this test runs, so the two cannot drift apart.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
	N8N_VERSIONS,
	NODE_TYPE,
	PACKAGE_NAME,
	REPO_ROOT,
	ensureN8nInstalled,
	expectSuccess,
	freePort,
	packPackage,
	run,
	startN8nServer,
	type N8nHome,
	type N8nServer,
} from '../../tools/n8n';

const MINUTE = 60_000;

/** The shell blocks of the README's "Install in n8n" section, in order. */
function readmeInstallBlocks(): string[] {
	const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
	const start = readme.indexOf('\n## Install in n8n\n');
	const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
	return [...section.matchAll(/^( *)```bash\n([\s\S]*?)^ *```$/gm)].map(([, indent, body]) =>
		body
			.split('\n')
			.map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
			.join('\n')
			.trim(),
	);
}

const blocks = readmeInstallBlocks();

test('the README gives two steps: build and pack in the clone, install the tarball in ~/.n8n/nodes', () => {
	expect(blocks).toHaveLength(2);
	// packPackage runs exactly `npm run build` and `npm pack`; `npm ci` is what made this checkout's node_modules.
	expect(blocks[0]).toBe('npm ci && npm run build && npm pack');
	expect(blocks[1]).toContain('~/.n8n/nodes');
	expect(blocks[1]).toMatch(/npm install --legacy-peer-deps \.\/\S+\.tgz/);
});

describe.each(N8N_VERSIONS)('installed as the README says, in a real n8n %s', (version) => {
	let userFolder: string;
	let server: N8nServer;

	beforeAll(async () => {
		await ensureN8nInstalled([version]);
		const tarball = await packPackage();
		// The README names the tarball `npm pack` writes: a version bump must update it.
		expect(blocks[1]).toContain(path.basename(tarball));
		userFolder = fs.mkdtempSync(path.join(os.tmpdir(), `n8n-readme-${version}-`));
		const env: NodeJS.ProcessEnv = { ...process.env, HOME: userFolder };
		delete env.N8N_USER_FOLDER;
		// Run where `npm pack` left the tarball, as a user does in the clone.
		expectSuccess(
			'the README install commands',
			await run('bash', ['-euo', 'pipefail', '-c', blocks[1]], {
				cwd: path.dirname(tarball),
				env,
				timeoutMs: 5 * MINUTE,
			}),
		);
		const n8nDir = path.join(userFolder, '.n8n');
		const home: N8nHome = {
			version,
			userFolder,
			n8nDir,
			nodesDir: path.join(n8nDir, 'nodes'),
			brokerPort: await freePort(),
			installMs: 0,
		};
		server = await startN8nServer(home);
		await server.setupOwner();
	}, 25 * MINUTE);

	afterAll(async () => {
		await server?.stop();
		if (userFolder) fs.rmSync(userFolder, { recursive: true, force: true });
	});

	test('the package sits in ~/.n8n/nodes without a second n8n-workflow beside it', () => {
		const modules = path.join(userFolder, '.n8n', 'nodes', 'node_modules');
		expect(fs.existsSync(path.join(modules, PACKAGE_NAME, 'package.json'))).toBe(true);
		expect(fs.existsSync(path.join(modules, 'n8n-workflow'))).toBe(false);
	});

	test("n8n's node types include the Invoice Service node, under the package's name", async () => {
		const r = await server.rest('POST', '/node-types', {
			nodeInfos: [{ name: NODE_TYPE, version: 1 }],
		});
		expect(r.status).toBe(200);
		// n8n answers with the node's own description, whose name has no package prefix.
		expect(r.body).toEqual([
			expect.objectContaining({ name: 'invoiceService', displayName: 'Invoice Service' }),
		]);
	});

	test('Settings → Community Nodes does not list it (docs/install.md: upgrade and remove it with npm)', async () => {
		const r = await server.rest('GET', '/community-packages');
		expect(r.status).toBe(200);
		expect(r.body).toEqual([]);
	});
});
