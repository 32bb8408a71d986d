import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** A message the fake accepted. */
export interface AcceptedMessage {
  to: string;
  text: string;
}

export interface FakeTelegram extends FakeServer {
  messages: AcceptedMessage[];
}

/** An error the way the Bot API writes it: the HTTP status repeats `error_code`. */
export function telegramError(
  status: number,
  description: string,
  parameters?: { retry_after?: number; migrate_to_chat_id?: number },
): ScriptedResponse {
  return {
    status,
    body: { ok: false, error_code: status, description, ...(parameters === undefined ? {} : { parameters }) },
  };
}

/** A 429 with `parameters.retry_after`, the Bot API's only retry hint. */
export function telegramRateLimit(retryAfterSeconds: number): ScriptedResponse {
  return telegramError(429, `Too Many Requests: retry after ${retryAfterSeconds}`, { retry_after: retryAfterSeconds });
}

// Bot tokens look like `123456789:AA…`; a path token of another shape is not a bot at all (404).
const TOKEN_SHAPE = /^\d+:[\w-]+$/;
const MAX_TEXT_CHARS = 4096;

interface SendMessageBody {
  chat_id?: unknown;
  text?: unknown;
}

/**
 * A fake Telegram Bot API with `sendMessage` at `{url}/bot<token>/sendMessage`. Knows one bot
 * token and the chats in `chatIds` (ids or `@usernames`); answers the API's success and error
 * shapes: 401 for a wrong token, 400 "chat not found", "message text is empty", "message is too
 * long" (over 4096 UTF-16 units).
 */
export async function createFakeTelegram(options: {
  botToken: string;
  chatIds: string[];
  delayMs?: number;
}): Promise<FakeTelegram> {
  const messages: AcceptedMessage[] = [];
  let nextMessageId = 1;
  const server = await createFakeServer((req: RecordedRequest) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.path);
    if (match === null || !TOKEN_SHAPE.test(decodeURIComponent(match[1]!))) return telegramError(404, 'Not Found');
    if (decodeURIComponent(match[1]!) !== options.botToken) return telegramError(401, 'Unauthorized');
    // Method names are case-insensitive in the Bot API.
    if (match[2]!.toLowerCase() !== 'sendmessage') return telegramError(404, 'Not Found: method not found');
    if (req.method !== 'POST' && req.method !== 'GET') return telegramError(405, 'Method Not Allowed');
    if (typeof req.body === 'string') return telegramError(400, "Bad Request: can't parse JSON object");
    const body = (req.body ?? {}) as SendMessageBody;
    const chatId = typeof body.chat_id === 'number' ? String(body.chat_id) : body.chat_id;
    if (chatId === undefined || chatId === '') return telegramError(400, 'Bad Request: chat_id is empty');
    if (typeof chatId !== 'string') return telegramError(400, 'Bad Request: invalid chat_id');
    if (typeof body.text !== 'string' || body.text.trim() === '')
      return telegramError(400, 'Bad Request: message text is empty');
    if (body.text.length > MAX_TEXT_CHARS) return telegramError(400, 'Bad Request: message is too long');
    if (!options.chatIds.includes(chatId)) return telegramError(400, 'Bad Request: chat not found');
    messages.push({ to: chatId, text: body.text });
    const numericId = /^-?\d+$/.test(chatId) ? Number(chatId) : -1001000000001;
    return {
      status: 200,
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
      body: {
        ok: true,
        result: {
          message_id: nextMessageId++,
          from: {
            id: Number(options.botToken.split(':')[0]),
            is_bot: true,
            first_name: 'Hookgate',
            username: 'hookgate_bot',
          },
          chat:
            numericId > 0
              ? { id: numericId, first_name: 'Ada', type: 'private' }
              : { id: numericId, title: 'Ops', type: chatId.startsWith('@') ? 'channel' : 'supergroup' },
          date: Math.floor(Date.now() / 1000),
          text: body.text,
        },
      },
    };
  });
  return Object.assign(server, { messages });
}
