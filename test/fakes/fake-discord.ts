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

export interface FakeDiscord extends FakeServer {
  messages: AcceptedMessage[];
}

/** A JSON error the way Discord writes it: `{message, code}` (code 0 for plain HTTP errors). */
export function discordError(status: number, message: string, code = 0): ScriptedResponse {
  return { status, body: { message, code } };
}

/**
 * A 429 as Discord sends it: `retry_after` in the body as float seconds, `Retry-After` header
 * as whole seconds (rounded up), plus the rate-limit scope headers.
 */
export function discordRateLimit(retryAfterSeconds: number, options: { global?: boolean } = {}): ScriptedResponse {
  const global = options.global ?? false;
  return {
    status: 429,
    body: { message: 'You are being rate limited.', retry_after: retryAfterSeconds, global },
    headers: {
      'retry-after': String(Math.ceil(retryAfterSeconds)),
      'x-ratelimit-scope': global ? 'global' : 'user',
      ...(global ? { 'x-ratelimit-global': 'true' } : {}),
    },
  };
}

/** The 50035 form error, with the per-field `_errors` list. */
function invalidFormBody(field: string, code: string, message: string): ScriptedResponse {
  return {
    status: 400,
    body: { message: 'Invalid Form Body', code: 50035, errors: { [field]: { _errors: [{ code, message }] } } },
  };
}

const MAX_CONTENT_CHARS = 2000;
const SNOWFLAKE = /^\d{17,20}$/;

interface CreateMessageBody {
  content?: unknown;
}

/**
 * A fake Discord REST API with Create Message at `{url}/channels/{id}/messages`. Knows one bot
 * token (`Authorization: Bot <token>`) and the channels in `channelIds`; answers Discord's
 * shapes: 401 `{message:"401: Unauthorized", code:0}`, 404 Unknown Channel (10003), 400 Cannot
 * send an empty message (50006), 400 Invalid Form Body (50035) for a non-snowflake id or content
 * over 2000 characters.
 */
export async function createFakeDiscord(options: {
  botToken: string;
  channelIds: string[];
  delayMs?: number;
}): Promise<FakeDiscord> {
  const messages: AcceptedMessage[] = [];
  let nextId = 1_200_000_000_000_000_000n;
  const server = await createFakeServer((req: RecordedRequest) => {
    const match = /^\/channels\/([^/]+)\/messages$/.exec(req.path);
    if (match === null) return discordError(404, '404: Not Found');
    if (req.headers.authorization !== `Bot ${options.botToken}`) return discordError(401, '401: Unauthorized');
    if (req.method !== 'POST') return discordError(405, '405: Method Not Allowed');
    const channelId = decodeURIComponent(match[1]!);
    if (!SNOWFLAKE.test(channelId))
      return invalidFormBody('channel_id', 'NUMBER_TYPE_COERCE', `Value "${channelId}" is not snowflake.`);
    if (!options.channelIds.includes(channelId)) return discordError(404, 'Unknown Channel', 10003);
    if (req.body === null || typeof req.body !== 'object') return discordError(400, '400: Bad Request');
    const { content } = req.body as CreateMessageBody;
    if (content !== undefined && typeof content !== 'string')
      return invalidFormBody('content', 'BASE_TYPE_STRING', 'Must be a string.');
    if (content === undefined || content.trim() === '') return discordError(400, 'Cannot send an empty message', 50006);
    if (content.length > MAX_CONTENT_CHARS) {
      return invalidFormBody('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT_CHARS} or fewer in length.`);
    }
    messages.push({ to: channelId, text: content });
    const id = String(nextId++);
    return {
      status: 200,
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
      body: {
        id,
        type: 0,
        channel_id: channelId,
        author: {
          id: '1100000000000000001',
          username: 'Hookgate',
          discriminator: '0',
          global_name: null,
          avatar: null,
          bot: true,
        },
        content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        flags: 0,
        components: [],
      },
    };
  });
  return Object.assign(server, { messages });
}
