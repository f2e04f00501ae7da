// The floor of the benchmark (issue 10): the least a node can do to turn these items into these requests.
// It reads the same parameters as Invoice Service → Customer → Create (a {{ $json.field }} from the item, as the
// node does), sends the same POST through the same n8n helper (httpRequestWithAuthentication with the
// credential read once, Bearer header from the credential) at the same concurrency, and outputs the answer as it
// came. Nothing else: no validation, no retries, no envelope, no
// error mapping, no stop report. Built only for the bench (bench/floor/install.ts): never in the package.
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

const CREDENTIAL_TYPE = 'invoiceServiceApi';

/**
 * A parameter's value for one item. `{{ $json.<field> }}` holding text is read from the item, as Invoice Service
 * reads it (nodes/InvoiceService/actions/itemParameter.ts; n8n 2.x's expression engine costs about 0.9 ms an
 * evaluation), so that the floor stays the least a node can cost; anything else is n8n's `getNodeParameter`.
 */
function read(context: IExecuteFunctions, name: string, itemIndex: number): IDataObject[string] {
	const raw = context.getNodeParameter(name, itemIndex, '', { rawExpressions: true });
	const field = /^=\{\{\s*\$json\.([A-Za-z_$][\w$]*)\s*\}\}$/.exec(String(raw))?.[1];
	const value = field === undefined ? undefined : context.getInputData()[itemIndex]?.json[field];
	return typeof value === 'string'
		? value
		: (context.getNodeParameter(name, itemIndex, '') as IDataObject[string]);
}

export class BenchFloor implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Bench Floor',
		name: 'benchFloor',
		group: ['output'],
		version: 1,
		subtitle: 'floor',
		description: 'Benchmark floor: the same requests as Invoice Service, nothing else',
		defaults: { name: 'Bench Floor' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		credentials: [{ name: CREDENTIAL_TYPE, required: true }],
		properties: [
			{ displayName: 'First Name', name: 'firstName', type: 'string', default: '' },
			{ displayName: 'Last Name', name: 'lastName', type: 'string', default: '' },
			{ displayName: 'Email', name: 'email', type: 'string', default: '' },
			{
				displayName: 'Additional Fields',
				name: 'additionalFields',
				type: 'collection',
				default: {},
				options: [
					{ displayName: 'Company Name', name: 'companyName', type: 'string', default: '' },
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [{ displayName: 'Concurrency', name: 'concurrency', type: 'number', default: 5 }],
			},
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const count = this.getInputData().length;
		const options = this.getNodeParameter('options', 0, {}) as IDataObject;
		const concurrency = Number(options.concurrency ?? 5);
		const credentials = await this.getCredentials(CREDENTIAL_TYPE);
		const url = `${String(credentials.baseUrl).replace(/\/+$/, '')}/api/1.1/wf/create-customer`;
		const credentialsDecrypted = {
			id: '',
			name: CREDENTIAL_TYPE,
			type: CREDENTIAL_TYPE,
			data: credentials,
		};
		const results: INodeExecutionData[] = new Array(count);
		let next = 0;
		const lane = async () => {
			while (next < count) {
				const itemIndex = next++;
				const additional = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
				const body: IDataObject = {
					first_name: read(this, 'firstName', itemIndex),
					last_name: read(this, 'lastName', itemIndex),
					email: read(this, 'email', itemIndex),
					...(additional.companyName ? { company_name: additional.companyName } : {}),
				};
				try {
					const answer = (await this.helpers.httpRequestWithAuthentication.call(
						this,
						CREDENTIAL_TYPE,
						{ method: 'POST', url, body, json: true },
						{ credentialsDecrypted },
					)) as IDataObject;
					results[itemIndex] = { json: answer, pairedItem: { item: itemIndex } };
				} catch (error) {
					// Counted as a failure by the bench; the floor does not map errors.
					results[itemIndex] = {
						json: { error: { message: (error as Error).message } },
						pairedItem: { item: itemIndex },
					};
				}
			}
		};
		await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
		return [results];
	}
}
