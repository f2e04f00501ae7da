// In-process workflow harness: runs a node's real `execute()` inside n8n-core's real `WorkflowExecute`,
// with the real request helpers (`httpRequestWithAuthentication`), credential handling modelled on n8n's
// server `CredentialsHelper` (packages/cli/src/credentials-helper.ts) and real expressions over upstream
// items. HTTP is left to the caller's nock interceptors.
//
// `reflect-metadata` must be loaded before n8n-core (its DI container reads decorator metadata).
import 'reflect-metadata';

import { randomUUID } from 'node:crypto';

import {
	BinaryDataService,
	DataDeduplicationService,
	ExecutionLifecycleHooks,
	ExternalSecretsProxy,
	WorkflowExecute,
} from 'n8n-core';
import {
	NodeHelpers,
	UnexpectedError,
	Workflow,
	type IBinaryData,
	type ICredentialDataDecryptedObject,
	type ICredentialType,
	type IDataObject,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IRunData,
	type ITaskData,
	type IVersionedNodeType,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';

import { HarnessCredentialsHelper } from './credentials-helper';
import { FixtureSource } from './FixtureSource.node';
import { MemoryDeduplicator } from './memory-deduplicator';

export type OnError = 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';

export interface RunOptions {
	/** The node under test: an instance (`new InvoiceService()`) or its class. */
	node: INodeType | IVersionedNodeType | (new () => INodeType | IVersionedNodeType);
	/** The credential type the node uses (an instance, e.g. `new InvoiceServiceApi()`). */
	credentialType: ICredentialType;
	/** The credential's stored data; defaults of the credential type are filled in like n8n does. */
	credentials: ICredentialDataDecryptedObject;
	/** The node's parameters (expressions such as `'={{ $json.email }}'` allowed). */
	parameters: INodeParameters;
	/** Upstream items: the source node emits these as the node's input (`[{}]` if omitted). */
	items?: IDataObject[];
	onError?: OnError;
	typeVersion?: number;
	/** Node name in the workflow (default: the description's `defaults.name`). */
	nodeName?: string;
	/** Full node type name (default `n8n-nodes-invoice-service.<description.name>`, as when installed). */
	nodeTypeName?: string;
	/** Node settings as in the editor: retry on fail, always output data. */
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	alwaysOutputData?: boolean;
	/** Node setting "Execute Once": the node runs for the first input item only. */
	executeOnce?: boolean;
	/** The node's id (default: a new one per run): the same id keeps its Idempotency Keys across runs. */
	nodeId?: string;
	/**
	 * Stops the execution when this settles, as the editor's Stop or the workflow's time-out do (n8n cancels
	 * the running WorkflowExecute, which aborts the nodes' cancel signal).
	 */
	cancelWhen?: Promise<unknown>;
}

/** How a failed run is retried, as n8n's executions list does (ExecutionService.retry). */
export interface RetryOptions {
	/** "Retry with currently saved workflow": the node under test with these parameters instead. */
	currentParameters?: INodeParameters;
}

export interface RunResult {
	/** Main outputs of the node under test (index 1 = error output with onError continueErrorOutput). */
	outputs: INodeExecutionData[][];
	/**
	 * The error the node threw (the original instance, e.g. a NodeApiError, with message, description,
	 * httpCode, context.itemIndex ...), or n8n's recorded error if the instance was not captured.
	 * Also set when the node threw under a continue-on-error setting (then the run still succeeds).
	 */
	error?: Error & IDataObject;
	/** Whole run data for deeper assertions. */
	runData: IRunData;
	/** The task data of the node under test (first run). */
	taskData?: ITaskData;
	/** 'success' | 'error' | ... as n8n records it. */
	status: IRun['status'];
	run: IRun;
	/** The name of the node under test inside the workflow. */
	nodeName: string;
	/**
	 * Retries this (failed) execution as n8n's executions list does: the saved execution (through JSON, as n8n
	 * stores it), its error and the failed node's last run removed, run again from its execution stack in mode
	 * "retry" (n8n 2.41.1 `ExecutionService.retry`).
	 */
	retry(options?: RetryOptions): Promise<RunResult>;
}

/**
 * n8n's processed-data store for in-process runs (n8n-core asks for one before any node can use keys). One per
 * test file: n8n-core's service is a singleton.
 */
export const deduplicator = new MemoryDeduplicator();
let deduplicatorReady: Promise<void> | undefined;
async function useDeduplicator(): Promise<void> {
	deduplicatorReady ??= DataDeduplicationService.init(deduplicator);
	await deduplicatorReady;
}

export const SOURCE_NODE_NAME = 'Source';
type DiContainer = { get<T>(type: new (...args: never[]) => T): T };
/**
 * n8n-core's DI container: it must be the copy of @n8n/di that n8n-core itself loads (the project's
 * top-level @n8n/di may be another version, pulled in by @n8n/node-cli, with its own empty registry).
 */
async function n8nCoreContainer(): Promise<DiContainer> {
	const diPath = require.resolve('@n8n/di', { paths: [require.resolve('n8n-core')] });
	return ((await import(diPath)) as { Container: DiContainer }).Container;
}

const SOURCE_NODE_TYPE = 'n8n-nodes-harness.fixtureSource';

/** n8n's own value for `additionalData` URLs; 2.x throws on empty strings, so they must be absolute. */
const INSTANCE_BASE_URL = 'http://localhost:5678/';

/** INodeTypes over a fixed map; the node under test gets its `execute` wrapped to keep the thrown error. */
class HarnessNodeTypes implements INodeTypes {
	private readonly wrapped = new Map<string, INodeType>();

	constructor(
		private readonly types: Record<string, INodeType | IVersionedNodeType>,
		private readonly onThrow: (nodeType: string, error: unknown) => void,
	) {}

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		const type = this.types[nodeType];
		if (!type) throw new UnexpectedError(`Unknown node type "${nodeType}" (harness)`);
		return type;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		const key = `${nodeType}@${version ?? 'latest'}`;
		let type = this.wrapped.get(key);
		if (!type) {
			const real = NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
			type = real;
			if (typeof real.execute === 'function') {
				const realExecute = real.execute;
				const onThrow = this.onThrow;
				// same object via the prototype chain (description, methods...), only execute is observed
				type = Object.create(real) as INodeType;
				type.execute = async function (this: IExecuteFunctions) {
					try {
						return await realExecute.call(this);
					} catch (error) {
						onThrow(nodeType, error);
						throw error;
					}
				};
			}
			this.wrapped.set(key, type);
		}
		return type;
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

let executionCounter = 0;

function asInstance<T>(value: T | (new () => T)): T {
	return typeof value === 'function' ? new (value as new () => T)() : value;
}

function defaultVersion(type: INodeType | IVersionedNodeType): number {
	if ('nodeVersions' in type) return type.currentVersion;
	const { version } = type.description;
	return Array.isArray(version) ? Math.max(...version) : version;
}

/** Run the node under test once, fed by a source node emitting `items`, inside n8n's WorkflowExecute. */
export async function runNode(opts: RunOptions): Promise<RunResult> {
	const nodeType = asInstance(opts.node);
	const description = NodeHelpers.getVersionedNodeType(nodeType, opts.typeVersion).description;
	const nodeTypeName = opts.nodeTypeName ?? `n8n-nodes-invoice-service.${description.name}`;
	const nodeName = opts.nodeName ?? description.defaults?.name ?? description.displayName;
	const credentialType = opts.credentialType;
	const executionId = `harness-${++executionCounter}`;

	const thrown: unknown[] = [];
	const nodeTypes = new HarnessNodeTypes(
		{ [SOURCE_NODE_TYPE]: new FixtureSource(), [nodeTypeName]: nodeType },
		(type, error) => {
			if (type === nodeTypeName) thrown.push(error);
		},
	);

	const sourceNode: INode = {
		id: randomUUID(),
		name: SOURCE_NODE_NAME,
		type: SOURCE_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: { itemsJson: JSON.stringify(opts.items ?? [{}]) },
	};
	await useDeduplicator();
	const nodeUnderTest: INode = {
		id: opts.nodeId ?? randomUUID(),
		name: nodeName,
		type: nodeTypeName,
		typeVersion: opts.typeVersion ?? defaultVersion(nodeType),
		position: [220, 0],
		parameters: structuredClone(opts.parameters),
		credentials: {
			[credentialType.name]: { id: 'cred-1', name: `${credentialType.displayName} account` },
		},
		...(opts.onError !== undefined && { onError: opts.onError }),
		...(opts.retryOnFail !== undefined && { retryOnFail: opts.retryOnFail }),
		...(opts.maxTries !== undefined && { maxTries: opts.maxTries }),
		...(opts.waitBetweenTries !== undefined && { waitBetweenTries: opts.waitBetweenTries }),
		...(opts.alwaysOutputData !== undefined && { alwaysOutputData: opts.alwaysOutputData }),
		...(opts.executeOnce !== undefined && { executeOnce: opts.executeOnce }),
	};
	const connections = {
		[SOURCE_NODE_NAME]: { main: [[{ node: nodeName, type: 'main' as const, index: 0 }]] },
	};
	const workflowData: IWorkflowBase = {
		id: 'harness-workflow',
		name: 'Harness workflow',
		active: false,
		isArchived: false,
		nodes: [sourceNode, nodeUnderTest],
		connections,
		settings: { executionOrder: 'v1' },
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	};
	// The Workflow constructor fills in parameter defaults (NodeHelpers.getNodeParameters) like n8n does.
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes: workflowData.nodes,
		connections: workflowData.connections,
		active: false,
		nodeTypes,
		settings: workflowData.settings,
	});

	const hooks = new ExecutionLifecycleHooks('manual', executionId, workflowData);
	const credentialsHelper = new HarnessCredentialsHelper([credentialType], {
		[credentialType.name]: structuredClone(opts.credentials),
	});
	const url = (path: string) => new URL(path, INSTANCE_BASE_URL).toString();
	const notInHarness = (what: string) => async () => {
		throw new UnexpectedError(`${what} is not available in the test harness`);
	};
	const additionalData: IWorkflowExecuteAdditionalData = {
		credentialsHelper,
		hooks,
		executionId,
		userId: 'harness-user',
		workflowId: workflowData.id,
		currentNodeExecutionIndex: 0,
		restApiUrl: url('rest'),
		instanceBaseUrl: INSTANCE_BASE_URL,
		formBaseUrl: url('form'),
		formWaitingBaseUrl: url('form-waiting'),
		formTestBaseUrl: url('form-test'),
		webhookBaseUrl: url('webhook'),
		webhookWaitingBaseUrl: url('webhook-waiting'),
		webhookTestBaseUrl: url('webhook-test'),
		mcpBaseUrl: url('mcp'),
		mcpTestBaseUrl: url('mcp-test'),
		variables: {},
		externalSecretsProxy: (await n8nCoreContainer()).get(ExternalSecretsProxy),
		executeWorkflow: notInHarness('executeWorkflow'),
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: notInHarness('startRunnerTask'),
	};

	const workflowExecute = new WorkflowExecute(additionalData, 'manual');
	const running = workflowExecute.run({ workflow, startNode: sourceNode });
	void opts.cancelWhen?.then(() => running.cancel());
	const run = await running;

	const resultOf = (finished: IRun): RunResult => {
		const runData = finished.data.resultData.runData;
		const taskData = runData[nodeName]?.[runData[nodeName].length - 1];
		if (!taskData) {
			const sourceError = runData[SOURCE_NODE_NAME]?.[0]?.error ?? finished.data.resultData.error;
			throw new UnexpectedError(
				`The node under test did not run${sourceError ? `: ${sourceError.message}` : ''}`,
			);
		}
		const outputs = (taskData.data?.main ?? []).map((items) => items ?? []);
		const recorded = taskData.error ?? (finished.data.resultData.error as ITaskData['error']);
		let error: (Error & IDataObject) | undefined;
		if (thrown.length > 0 && thrown[thrown.length - 1] instanceof Error) {
			error = thrown[thrown.length - 1] as Error & IDataObject;
		} else if (recorded) {
			error = Object.assign(new Error(recorded.message), recorded) as unknown as Error &
				IDataObject;
		}
		thrown.length = 0;
		return {
			outputs,
			error,
			runData,
			taskData,
			status: finished.status,
			run: finished,
			nodeName,
			retry: async (options) => await retryRun(finished, options),
		};
	};

	const retryRun = async (failed: IRun, options: RetryOptions = {}): Promise<RunResult> => {
		// Saved and loaded again, as n8n does (its flatted JSON keeps plain properties alike).
		const data = JSON.parse(JSON.stringify(failed.data)) as IRun['data'];
		const { lastNodeExecuted } = data.resultData;
		if (lastNodeExecuted) {
			delete data.resultData.error;
			const nodeRuns = data.resultData.runData[lastNodeExecuted];
			if (nodeRuns?.length && nodeRuns[nodeRuns.length - 1].error !== undefined) nodeRuns.pop();
		}
		let retried = workflow;
		if (options.currentParameters) {
			const current = { ...nodeUnderTest, parameters: structuredClone(options.currentParameters) };
			retried = new Workflow({
				id: workflowData.id,
				name: workflowData.name,
				nodes: [sourceNode, current],
				connections: workflowData.connections,
				active: false,
				nodeTypes,
				settings: workflowData.settings,
			});
			for (const entry of data.executionData?.nodeExecutionStack ?? []) {
				entry.node = retried.getNode(entry.node.name)!;
			}
		}
		const retryExecute = new WorkflowExecute(
			{ ...additionalData, executionId: `${executionId}-retry` },
			'retry',
			data,
		);
		return resultOf(await retryExecute.processRunExecutionData(retried));
	};

	return resultOf(run);
}

/** The bytes of a binary property, whether n8n kept them inline (base64) or in a binary data manager. */
export async function getBinaryBuffer(
	item: INodeExecutionData,
	property = 'data',
): Promise<Buffer> {
	const binary: IBinaryData | undefined = item.binary?.[property];
	if (!binary) throw new UnexpectedError(`Item has no binary property "${property}"`);
	return await (await n8nCoreContainer()).get(BinaryDataService).getAsBuffer(binary);
}
