// The in-process harness's credentials (run-node.ts): n8n's server CredentialsHelper without the database.
// `reflect-metadata` must be loaded before n8n-core (its DI container reads decorator metadata).
import 'reflect-metadata';

import { Credentials, getAdditionalKeys } from 'n8n-core';
import {
	ICredentialsHelper,
	isExpression,
	NodeHelpers,
	UnexpectedError,
	Workflow,
	type ICredentialDataDecryptedObject,
	type ICredentialsExpressionResolveValues,
	type ICredentialType,
	type IDataObject,
	type IExecuteData,
	type IHttpRequestHelper,
	type IHttpRequestOptions,
	type INode,
	type INodeCredentialsDetails,
	type INodeParameters,
	type INodeProperties,
	type INodeTypes,
	type IRequestOptionsSimplified,
	type IWorkflowDataProxyAdditionalKeys,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

type CredentialStore = Record<string, ICredentialDataDecryptedObject>;

/**
 * A stand-in for n8n's server CredentialsHelper (packages/cli/src/credentials-helper.ts) without the
 * database: `getDecrypted` returns the given data with the credential type's defaults applied and its
 * expressions resolved; `authenticate` applies a generic `authenticate` block by resolving its
 * expressions against `$credentials` exactly like the server does.
 */
export class HarnessCredentialsHelper extends ICredentialsHelper {
	private readonly types = new Map<string, ICredentialType>();

	constructor(
		credentialTypes: ICredentialType[],
		private readonly store: CredentialStore,
	) {
		super();
		for (const type of credentialTypes) this.types.set(type.name, type);
	}

	private getType(name: string): ICredentialType {
		const type = this.types.get(name);
		if (!type) throw new UnexpectedError(`Unknown credential type "${name}" (harness)`);
		return type;
	}

	getParentTypes(name: string): string[] {
		const type = this.types.get(name);
		if (!type?.extends) return [];
		const parents: string[] = [];
		for (const parent of type.extends) {
			parents.push(parent, ...this.getParentTypes(parent));
		}
		return parents;
	}

	isCredentialUsableByNode(credentialType: string, nodeType: string): boolean {
		const type = this.types.get(credentialType);
		if (!type?.restrictToSupportedNodes) return true;
		const shortName = nodeType.includes('.')
			? nodeType.slice(nodeType.lastIndexOf('.') + 1)
			: nodeType;
		return (type.supportedNodes ?? []).some((n) => n === nodeType || n === shortName);
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incomingRequestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const requestOptions = incomingRequestOptions;
		const credentialType = this.getType(typeName);

		if (credentialType.authenticate) {
			if (typeof credentialType.authenticate === 'function') {
				return await credentialType.authenticate(
					credentials,
					requestOptions as IHttpRequestOptions,
				);
			}
			if (typeof credentialType.authenticate === 'object') {
				if (!workflow || !node) {
					throw new UnexpectedError(
						'Workflow and node are required for declarative credential authentication',
					);
				}
				const { authenticate } = credentialType;
				if (requestOptions.headers === undefined) requestOptions.headers = {};
				if (authenticate.type === 'generic') {
					for (const [outerKey, outerValue] of Object.entries(authenticate.properties)) {
						for (const [key, value] of Object.entries(outerValue as IDataObject)) {
							const keyResolved = this.resolveValue(
								key,
								{ $credentials: credentials },
								workflow,
								node,
							);
							const valueResolved = this.resolveValue(
								value as string,
								{ $credentials: credentials },
								workflow,
								node,
							);
							const target = requestOptions as unknown as Record<string, IDataObject>;
							if (!target[outerKey]) target[outerKey] = {};
							target[outerKey][keyResolved] = valueResolved;
						}
					}
				}
			}
		}
		return requestOptions as IHttpRequestOptions;
	}

	/** Same as the server: `workflow.expression.getSimpleParameterValue(node, value, 'internal', keys)`. */
	private resolveValue(
		parameterValue: string,
		additionalKeys: IWorkflowDataProxyAdditionalKeys,
		workflow: Workflow,
		node: INode,
	): string {
		if (!isExpression(parameterValue)) return parameterValue;
		const returnValue = workflow.expression.getSimpleParameterValue(
			node,
			parameterValue,
			'internal',
			additionalKeys,
			undefined,
			'',
		);
		if (!returnValue) return '';
		return returnValue.toString();
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.getType(typeName);
		const expirableProperty = credentialType.properties.find(
			(property) => property.type === 'hidden' && property?.typeOptions?.expirable === true,
		);
		if (expirableProperty?.name === undefined) return undefined;
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		if (credentials[expirableProperty.name] !== '' && !credentialsExpired) return undefined;

		const output = await credentialType.preAuthentication.call(helpers, credentials);
		if (output[expirableProperty.name] === undefined) return undefined;
		if (node.credentials) {
			// the server persists the refreshed token; the harness keeps it in memory
			this.store[typeName] = {
				...this.store[typeName],
				...(output as ICredentialDataDecryptedObject),
			};
			return Object.assign(credentials, output);
		}
		return undefined;
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.getType(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		const output = await credentialType.preAuthentication.call(helpers, credentials);
		return (output as ICredentialDataDecryptedObject) ?? undefined;
	}

	async getCredentials(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<Credentials> {
		const credentials = new Credentials(
			{ id: nodeCredentials.id, name: nodeCredentials.name },
			type,
		);
		await credentials.setData(this.store[type] ?? {});
		return credentials;
	}

	async getDecrypted(
		additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		raw?: boolean,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const stored = this.store[type];
		if (stored === undefined)
			throw new UnexpectedError(`No credentials of type "${type}" (harness)`);
		const original = structuredClone(stored);
		if (raw === true) return original;

		// applyDefaultsAndOverwrites (no overwrites here): fill in the credential type's defaults
		let decryptedData = NodeHelpers.getNodeParameters(
			this.getCredentialsProperties(type),
			original as INodeParameters,
			true,
			false,
			null,
			null,
		) as ICredentialDataDecryptedObject;
		if (original.oauthTokenData !== undefined)
			decryptedData.oauthTokenData = original.oauthTokenData;

		const additionalKeys = getAdditionalKeys(additionalData, mode, null, { isCredential: true });
		if (expressionResolveValues) {
			try {
				decryptedData = expressionResolveValues.workflow.expression.getParameterValue(
					decryptedData as INodeParameters,
					expressionResolveValues.runExecutionData,
					expressionResolveValues.runIndex,
					expressionResolveValues.itemIndex,
					expressionResolveValues.node.name,
					expressionResolveValues.connectionInputData,
					mode,
					additionalKeys,
					executeData,
					false,
					decryptedData,
				) as ICredentialDataDecryptedObject;
			} catch (e) {
				(e as Error).message += ' [Error resolving credentials]';
				throw e;
			}
		} else if (executeData) {
			// runless credentials (e.g. loadOptions): the server resolves against a mock node
			const workflow = new Workflow({
				nodes: [executeData.node],
				connections: {},
				active: false,
				nodeTypes: emptyNodeTypes,
			});
			decryptedData = workflow.expression.getComplexParameterValue(
				executeData.node,
				decryptedData as INodeParameters,
				mode,
				additionalKeys,
				undefined,
				undefined,
				decryptedData,
			) as ICredentialDataDecryptedObject;
		}
		return decryptedData;
	}

	async updateCredentials(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.store[type] = data;
	}

	async updateCredentialsOauthTokenData(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.store[type] = { ...this.store[type], oauthTokenData: data.oauthTokenData };
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		const credentialType = this.getType(type);
		if (credentialType.extends === undefined) return credentialType.properties;
		const combined: INodeProperties[] = [];
		for (const parent of credentialType.extends) {
			if (this.types.has(parent)) {
				NodeHelpers.mergeNodeProperties(combined, this.getCredentialsProperties(parent));
			}
		}
		NodeHelpers.mergeNodeProperties(combined, credentialType.properties);
		return combined;
	}
}

const emptyNodeTypes: INodeTypes = {
	getByName: (name) => {
		throw new UnexpectedError(`Unknown node type "${name}" (harness)`);
	},
	getByNameAndVersion: (name) => {
		throw new UnexpectedError(`Unknown node type "${name}" (harness)`);
	},
	getKnownTypes: () => ({}),
};
