// `npm run demo`: the node in a real n8n against the local sandbox, start to finish.
//  1. builds and packs this package,
//  2. installs n8n (2.41.1 by default, DEMO_N8N_VERSION to change) into the cache if it is missing,
//  3. starts the sandbox service with its e-mail outbox in demo-output/,
//  4. installs the tarball as a community node into a fresh n8n user folder,
//  5. runs examples/new-customer-invoice-pdf.json with `n8n execute` (Send Email switched on: the sandbox's outbox),
//  6. prints the created customer and invoice and writes the PDF next to the .eml in demo-output/.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSandbox } from '../sandbox/server';
import {
	DEFAULT_N8N_VERSION,
	REPO_ROOT,
	createN8nHome,
	ensureN8nInstalled,
	invoiceServiceCredential,
	loadExample,
	nodeError,
	nodeOutput,
	packPackage,
	prepareWorkflow,
	readBinary,
	removeHome,
	runWorkflows,
} from '../tools/n8n';

const WORKFLOW_ID = 'demoInvoicePdf01';

function step(msg: string) {
	console.log(`\n== ${msg}`);
}

async function main() {
	const t0 = Date.now();
	const version = process.env.DEMO_N8N_VERSION ?? DEFAULT_N8N_VERSION;
	const outDir = path.join(REPO_ROOT, 'demo-output');
	fs.mkdirSync(outDir, { recursive: true });

	step('Building and packing n8n-nodes-invoice-service');
	const tarball = await packPackage({ echo: true });
	console.log(`package: ${tarball}`);

	step(`Making sure n8n ${version} is installed (first time: about 7 minutes)`);
	await ensureN8nInstalled([version]);

	step('Starting the sandbox service');
	const sandbox = await startSandbox({ outboxDir: outDir });
	console.log(
		`sandbox: ${sandbox.baseUrl} (API key ${sandbox.apiKey.slice(0, 8)}…), outbox ${sandbox.outboxDir}`,
	);

	const home = await createN8nHome(version, tarball);
	try {
		step(`Running examples/new-customer-invoice-pdf.json in n8n ${version}`);
		const credential = { id: 'invoiceServiceCred', name: 'Invoice Service sandbox' };
		const workflow = prepareWorkflow(loadExample('new-customer-invoice-pdf.json'), {
			id: WORKFLOW_ID,
			credential,
		}) as { nodes: Array<{ name: string; parameters: { options?: object } }> };
		// The example leaves Send Email off (against a real app it would mail a real invoice); the sandbox only
		// writes the e-mail into demo-output/, so the demo shows it.
		const invoiceNode = workflow.nodes.find((node) => node.name === 'Create invoice')!;
		invoiceNode.parameters.options = { ...invoiceNode.parameters.options, sendEmail: true };
		const batch = await runWorkflows(home, {
			credentials: [invoiceServiceCredential(credential, sandbox)],
			workflows: [workflow],
			log: (m) => console.log(`  n8n ${m}`),
		});
		const result = batch.results[WORKFLOW_ID];
		const run = result.run;
		if (result.code !== 0 || !run) {
			const err = nodeError(run, 'Create customer') ?? nodeError(run, 'Create invoice');
			console.error(`n8n exited ${result.code}: ${err?.message ?? '(no run data)'}`);
			if (err?.description) console.error(err.description);
			if (!run) console.error(result.stdout.slice(-3000), result.stderr.slice(-3000));
			process.exitCode = 1;
			return;
		}

		const customer = nodeOutput(run, 'Create customer')[0];
		const invoice = nodeOutput(run, 'Create invoice')[0];
		step('Created customer');
		console.log(JSON.stringify(customer?.json, null, 2));
		step('Created invoice');
		console.log(JSON.stringify(invoice?.json, null, 2));

		const pdfRef = invoice?.binary?.data;
		if (pdfRef) {
			const bytes = readBinary(home, pdfRef);
			const pdfPath = path.join(outDir, pdfRef.fileName ?? 'invoice.pdf');
			fs.writeFileSync(pdfPath, bytes);
			console.log(`\nPDF (${pdfRef.mimeType}, ${bytes.length} bytes) written to ${pdfPath}`);
		} else {
			console.log('\nThe invoice item carries no binary PDF (downloadPdf off?)');
		}
		const eml = path.join(sandbox.outboxDir, `${String(invoice?.json.invoice_id)}.eml`);
		if (fs.existsSync(eml)) console.log(`E-mail the service sent to the customer: ${eml}`);
		else console.log(`No e-mail in ${sandbox.outboxDir} (sendEmail off?)`);
		console.log(
			`\nDone in ${((Date.now() - t0) / 1000).toFixed(1)} s (n8n import ${(batch.importMs / 1000).toFixed(1)} s, ` +
				`execute ${(result.ms / 1000).toFixed(1)} s). Output in ${outDir}`,
		);
	} finally {
		removeHome(home);
		await sandbox.close();
	}
}

main().catch((err) => {
	console.error(err instanceof Error ? (err.stack ?? err.message) : err);
	process.exitCode = 1;
});
