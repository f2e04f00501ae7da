// What the driver knows about this project: its package and node names, the n8n versions it supports, and
// where the repository is.
import * as path from 'node:path';

import versions from './versions.json';

export const PACKAGE_NAME = 'n8n-nodes-invoice-service';
/** Node type of the Invoice Service node when installed as a community package. */
export const NODE_TYPE = `${PACKAGE_NAME}.invoiceService`;
export const CREDENTIAL_TYPE = 'invoiceServiceApi';
/** The n8n versions supported and tested (tools/n8n/versions.json, the one list; `npm run n8n:newest` checks it). */
export const SUPPORTED_N8N_VERSIONS: string[] = versions.tested;
export const DEFAULT_N8N_VERSION = SUPPORTED_N8N_VERSIONS[0];
/**
 * The versions the e2e tests run against: all supported ones, or a comma-separated list in
 * INVOICE_SERVICE_E2E_N8N_VERSIONS (e.g. `2.41.1` for a quicker loop).
 */
export const N8N_VERSIONS: string[] = (process.env.INVOICE_SERVICE_E2E_N8N_VERSIONS ?? '')
	.split(',')
	.map((v) => v.trim())
	.filter(Boolean);
if (N8N_VERSIONS.length === 0) N8N_VERSIONS.push(...SUPPORTED_N8N_VERSIONS);

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
