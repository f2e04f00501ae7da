// A stand-in for an OpenAI-compatible chat model on loopback, for n8n's AI Agent with the OpenAI Chat Model
// node (its credential's Base URL pointed here): answers POST /v1/chat/completions with what a script decides
// (a tool call or a final text), as JSON or, when the request asks to stream, as server-sent events, and
// records every request (the `tools` list the model is sent, the messages).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OpenAiTool {
	type: string;
	function: {
		name: string;
		description?: string;
		parameters?: { properties?: Record<string, { description?: string }> };
	};
}

export interface ModelRequest {
	tools: OpenAiTool[];
	messages: Array<{ role: string; content?: unknown }>;
	stream: boolean;
}

export type ModelReply =
	| { toolCall: { name: string; arguments: Record<string, unknown> } }
	| { text: string };

export interface StandInModel {
	/** The Base URL for the credential (`…/v1`). */
	baseUrl: string;
	requests: ModelRequest[];
	close(): Promise<void>;
}

function completion(reply: ModelReply, callId: string) {
	const message =
		'toolCall' in reply
			? {
					role: 'assistant',
					content: null,
					tool_calls: [
						{
							id: callId,
							type: 'function',
							function: {
								name: reply.toolCall.name,
								arguments: JSON.stringify(reply.toolCall.arguments),
							},
						},
					],
				}
			: { role: 'assistant', content: reply.text };
	return { message, finishReason: 'toolCall' in reply ? 'tool_calls' : 'stop' };
}

function send(res: http.ServerResponse, stream: boolean, reply: ModelReply, callId: string) {
	const { message, finishReason } = completion(reply, callId);
	const base = {
		id: `chatcmpl-${callId}`,
		created: Math.floor(Date.now() / 1000),
		model: 'stand-in',
	};
	const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
	if (!stream) {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(
			JSON.stringify({
				...base,
				object: 'chat.completion',
				choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
				usage,
			}),
		);
		return;
	}
	// Streamed: the whole message in one delta (tool calls carry their index), then the finish reason.
	const delta = message.tool_calls
		? {
				role: 'assistant',
				tool_calls: message.tool_calls.map((call, index) => ({ index, ...call })),
			}
		: { role: 'assistant', content: message.content };
	const chunk = (choice: object, extra: object = {}) =>
		`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [choice], ...extra })}\n\n`;
	res.writeHead(200, { 'content-type': 'text/event-stream' });
	res.write(chunk({ index: 0, delta, finish_reason: null }));
	res.write(chunk({ index: 0, delta: {}, finish_reason: finishReason }, { usage }));
	res.end('data: [DONE]\n\n');
}

/** Starts the stand-in on a free loopback port; `script` decides each answer from the request. */
export async function startStandInModel(
	script: (request: ModelRequest) => ModelReply,
): Promise<StandInModel> {
	const requests: ModelRequest[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
				return;
			}
			try {
				const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Partial<ModelRequest>;
				const request: ModelRequest = {
					tools: body.tools ?? [],
					messages: body.messages ?? [],
					stream: body.stream === true,
				};
				requests.push(request);
				send(res, request.stream, script(request), `call_${requests.length}`);
			} catch (error) {
				res.writeHead(500, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: String(error) } }));
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}
