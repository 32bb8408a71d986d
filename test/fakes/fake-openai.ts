import { randomBytes } from 'node:crypto';
import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** An error body the way the OpenAI API writes it. */
export function openAiError(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  headers?: Record<string, string>,
): ScriptedResponse {
  return {
    status,
    body: { error: { message, type, param: null, code } },
    ...(headers === undefined ? {} : { headers }),
  };
}

interface ChatBody {
  model?: unknown;
  messages?: Array<{ role?: unknown; content?: unknown }>;
  reasoning_effort?: unknown;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/**
 * A fake OpenAI-compatible Chat Completions endpoint at `{url}/v1/chat/completions`. Checks the
 * bearer key and the request shape the way the API does, and answers with the API's response
 * and error shapes. `reply` makes the assistant text from the request.
 */
export function createFakeOpenAi(options: {
  apiKey: string;
  reply?: (body: ChatBody) => string;
  /** Answer successful requests this late. */
  delayMs?: number;
}): Promise<FakeServer> {
  const reply = options.reply ?? ((b) => `fake reply to ${Array.isArray(b.messages) ? b.messages.length : 0} messages`);
  return createFakeServer((req: RecordedRequest) => {
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
      return openAiError(404, `Invalid URL (${req.method} ${req.path})`, 'invalid_request_error');
    }
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return openAiError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    const body = req.body as ChatBody | null;
    if (body === null || typeof body !== 'object')
      return openAiError(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
    if (typeof body.model !== 'string')
      return openAiError(400, 'you must provide a model parameter', 'invalid_request_error');
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return openAiError(400, "[] is too short - 'messages'", 'invalid_request_error');
    }
    for (const m of body.messages) {
      if (typeof m.role !== 'string' || !ROLES.has(m.role) || typeof m.content !== 'string') {
        return openAiError(
          400,
          "Invalid value for 'messages': each message needs a role and string content.",
          'invalid_request_error',
        );
      }
    }
    if (body.reasoning_effort !== undefined && !EFFORTS.has(String(body.reasoning_effort))) {
      return openAiError(400, "Invalid value for 'reasoning_effort'.", 'invalid_request_error', 'invalid_value');
    }
    const text = reply(body);
    return {
      status: 200,
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
      body: {
        id: `chatcmpl-${randomBytes(12).toString('hex')}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        system_fingerprint: 'fp_fake',
      },
    };
  });
}
