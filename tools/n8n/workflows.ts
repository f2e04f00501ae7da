// Workflow files: the examples users import (examples/), made ready for an n8n home.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CREDENTIAL_TYPE, NODE_TYPE, REPO_ROOT } from './project';

/** Reads a JSON file of examples/ (workflows users can import). */
export function loadExample(name: string): Record<string, unknown> {
	return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8')) as Record<
		string,
		unknown
	>;
}

/**
 * A copy of an example workflow ready to import: a new id (at most 16 characters), and every Invoice Service
 * node pointed at the given credential.
 */
export function prepareWorkflow(
	workflow: Record<string, unknown>,
	opts: { id: string; name?: string; credential?: { id: string; name: string } },
): Record<string, unknown> {
	const wf = JSON.parse(JSON.stringify(workflow)) as Record<string, unknown> & {
		nodes: Array<Record<string, unknown>>;
	};
	wf.id = opts.id;
	if (opts.name) wf.name = opts.name;
	delete wf.meta;
	delete wf.versionId;
	if (opts.credential) {
		for (const node of wf.nodes) {
			if (node.type === NODE_TYPE) {
				node.credentials = {
					[CREDENTIAL_TYPE]: { id: opts.credential.id, name: opts.credential.name },
				};
			}
		}
	}
	return wf;
}
