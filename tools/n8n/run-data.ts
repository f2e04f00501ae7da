// Reading what `n8n execute --rawOutput` printed: the run JSON, each node's runs, output items, errors and
// binary data.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { N8nHome } from './user-folder';

// Loose shapes of what `--rawOutput` prints (IRun).
export interface NodeExecutionItem {
	json: Record<string, unknown>;
	binary?: Record<string, BinaryRef>;
	pairedItem?: unknown;
	error?: unknown;
}
export interface BinaryRef {
	data?: string;
	id?: string;
	mimeType?: string;
	fileName?: string;
	fileExtension?: string;
	fileSize?: string;
	[k: string]: unknown;
}
export interface TaskData {
	data?: { main?: Array<NodeExecutionItem[] | null> };
	error?: { message?: string; description?: string; httpCode?: string; [k: string]: unknown };
	executionStatus?: string;
	/** n8n's execution hints, shown under the node's output. */
	hints?: Array<{ message: string; type?: string; location?: string }>;
	[k: string]: unknown;
}
export interface RunData {
	finished?: boolean;
	status?: string;
	mode?: string;
	data: {
		resultData: {
			runData: Record<string, TaskData[]>;
			error?: {
				message?: string;
				description?: string;
				node?: { name?: string };
				[k: string]: unknown;
			};
			lastNodeExecuted?: string;
		};
	};
	[k: string]: unknown;
}

/**
 * Finds the run JSON in n8n's stdout: it starts at the first line beginning with `{` and ends at the first
 * later line that is exactly `}` for which the text parses (n8n pretty-prints with two spaces).
 */
export function parseRawOutput(stdout: string): RunData | undefined {
	const lines = stdout.split(/\r?\n/);
	const start = lines.findIndex((l) => l.startsWith('{'));
	if (start < 0) return undefined;
	if (lines[start].trim().endsWith('}')) {
		try {
			return JSON.parse(lines[start]) as RunData;
		} catch {
			// a multi-line object after all
		}
	}
	for (let end = start + 1; end < lines.length; end++) {
		if (lines[end] !== '}') continue;
		try {
			return JSON.parse(lines.slice(start, end + 1).join('\n')) as RunData;
		} catch {
			// keep looking
		}
	}
	return undefined;
}

/** All runs of a node (empty when the node did not run). */
export function nodeRuns(run: RunData | undefined, nodeName: string): TaskData[] {
	return run?.data?.resultData?.runData?.[nodeName] ?? [];
}

/** `runData.<nodeName>[runIndex].data.main[output]` (an empty array when absent). */
export function nodeOutput(
	run: RunData | undefined,
	nodeName: string,
	output = 0,
	runIndex = 0,
): NodeExecutionItem[] {
	return nodeRuns(run, nodeName)[runIndex]?.data?.main?.[output] ?? [];
}

/** The json of each item of a node output. */
export function outputJson(
	run: RunData | undefined,
	nodeName: string,
	output = 0,
): Array<Record<string, unknown>> {
	return nodeOutput(run, nodeName, output).map((i) => i.json);
}

/** The error of a node that failed (its task's `error`), or the run's error when it names that node. */
export function nodeError(
	run: RunData | undefined,
	nodeName: string,
): { message?: string; description?: string; [k: string]: unknown } | undefined {
	const task = nodeRuns(run, nodeName)[0];
	if (task?.error) return task.error;
	const err = run?.data?.resultData?.error;
	if (err && (!err.node || err.node.name === nodeName)) return err;
	return undefined;
}

/** Which nodes ran, in the run data. */
export function nodesThatRan(run: RunData | undefined): string[] {
	return Object.keys(run?.data?.resultData?.runData ?? {});
}

/**
 * The bytes of a binary property. n8n keeps binary data either inline (base64 in `data`, the "default"
 * mode, 1.x's default) or on disk (`id` = `filesystem-v2:<path>`, `data` = "filesystem-v2": 2.x's default,
 * under `<n8nDir>/storage`).
 */
export function readBinary(home: N8nHome, ref: BinaryRef): Buffer {
	if (ref.id && typeof ref.id === 'string') {
		const sep = ref.id.indexOf(':');
		const mode = ref.id.slice(0, sep);
		const rest = ref.id.slice(sep + 1);
		if (mode.startsWith('filesystem')) {
			// N8N_BINARY_DATA_STORAGE_PATH defaults to <n8nDir>/storage (2.x) or <n8nDir>/binaryData (1.x).
			const candidates = ['storage', 'binaryData'].map((d) => path.join(home.n8nDir, d, rest));
			for (const c of candidates) if (fs.existsSync(c)) return fs.readFileSync(c);
			throw new Error(`binary ${ref.id} not found in ${candidates.join(' or ')}`);
		}
		throw new Error(`binary data mode "${mode}" is not readable by the e2e driver`);
	}
	if (typeof ref.data === 'string') return Buffer.from(ref.data, 'base64');
	throw new Error(`binary reference has neither data nor id: ${JSON.stringify(ref)}`);
}
