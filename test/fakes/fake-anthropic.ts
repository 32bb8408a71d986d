import { randomBytes } from 'node:crypto';
import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** An error body the way the Anthropic API writes it. */
export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): ScriptedResponse {
  return { status, body: { type: 'error', error: { type, message } }, ...(headers === undefined ? {} : { headers }) };
}

interface MessagesBody {
  model?: unknown;
  max_tokens?: unknown;
  system?: unknown;
  messages?: Array<{ role?: unknown; content?: unknown }>;
  thinking?: { type?: unknown; budget_tokens?: unknown };
}

/**
 * A fake Anthropic Messages API at `{url}/v1/messages`: checks `x-api-key`, `anthropic-version`
 * and the body rules the API enforces (max_tokens, user-first messages, thinking budget below
 * max_tokens and at least 1024), and answers with the API's message and error shapes.
 */
export function createFakeAnthropic(options: {
  apiKey: string;
  reply?: (body: MessagesBody) => string;
}): Promise<FakeServer> {
  const reply = options.reply ?? ((b) => `fake reply to ${Array.isArray(b.messages) ? b.messages.length : 0} messages`);
  return createFakeServer((req: RecordedRequest) => {
    if (req.method !== 'POST' || req.path !== '/v1/messages')
      return anthropicError(404, 'not_found_error', 'Not found');
    if (req.headers['x-api-key'] !== options.apiKey)
      return anthropicError(401, 'authentication_error', 'invalid x-api-key');
    if (typeof req.headers['anthropic-version'] !== 'string') {
      return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
    }
    const body = req.body as MessagesBody | null;
    if (body === null || typeof body !== 'object')
      return anthropicError(400, 'invalid_request_error', 'Request body is not valid JSON');
    if (typeof body.model !== 'string') return anthropicError(400, 'invalid_request_error', 'model: Field required');
    if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
      return anthropicError(400, 'invalid_request_error', 'max_tokens: Field required');
    }
    if (body.system !== undefined && typeof body.system !== 'string')
      return anthropicError(400, 'invalid_request_error', 'system: Input should be a valid string');
    const msgs = body.messages;
    if (!Array.isArray(msgs) || msgs.length === 0)
      return anthropicError(400, 'invalid_request_error', 'messages: at least one message is required');
    if (msgs[0]!.role !== 'user')
      return anthropicError(400, 'invalid_request_error', 'messages: first message must use the "user" role');
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      if ((m.role !== 'user' && m.role !== 'assistant') || typeof m.content !== 'string') {
        return anthropicError(
          400,
          'invalid_request_error',
          `messages.${i}: role must be user or assistant with string content`,
        );
      }
      if (i > 0 && m.role === msgs[i - 1]!.role) {
        return anthropicError(
          400,
          'invalid_request_error',
          'messages: roles must alternate between "user" and "assistant"',
        );
      }
    }
    if (body.thinking !== undefined) {
      const budget = body.thinking.budget_tokens;
      if (body.thinking.type !== 'enabled' || typeof budget !== 'number' || budget < 1024) {
        return anthropicError(
          400,
          'invalid_request_error',
          'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
        );
      }
      if (budget >= body.max_tokens) {
        return anthropicError(
          400,
          'invalid_request_error',
          '`max_tokens` must be greater than `thinking.budget_tokens`',
        );
      }
    }
    const content: Array<Record<string, unknown>> = [];
    if (body.thinking !== undefined) content.push({ type: 'thinking', thinking: 'fake reasoning', signature: 'sig' });
    content.push({ type: 'text', text: reply(body) });
    return {
      status: 200,
      body: {
        id: `msg_${randomBytes(12).toString('hex')}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content,
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 6 },
      },
    };
  });
}
