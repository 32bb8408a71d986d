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

export interface FakeSlack extends FakeServer {
  messages: AcceptedMessage[];
}

/** A Web API error: HTTP 200 with `{ok:false, error}`, the way Slack reports nearly everything. */
export function slackError(error: string, options: { status?: number; messages?: string[] } = {}): ScriptedResponse {
  return {
    status: options.status ?? 200,
    body: {
      ok: false,
      error,
      ...(options.messages === undefined ? {} : { response_metadata: { messages: options.messages } }),
    },
  };
}

/** A rate limit: HTTP 429, `Retry-After` in seconds, body `{ok:false, error:"ratelimited"}`. */
export function slackRateLimit(retryAfterSeconds: number): ScriptedResponse {
  return { ...slackError('ratelimited', { status: 429 }), headers: { 'retry-after': String(retryAfterSeconds) } };
}

const MAX_TEXT_CHARS = 40_000;

interface PostMessageBody {
  channel?: unknown;
  text?: unknown;
}

/**
 * A fake Slack Web API with `chat.postMessage` at `{url}/chat.postMessage`. Knows one bot token
 * and the channels in `channels`; answers Slack's shapes, all HTTP 200: `not_authed` (no token),
 * `invalid_auth` (wrong token), `channel_not_found`, `no_text`, `msg_too_long` (over 40,000
 * characters; the live API may truncate with a `message_truncated` warning instead, the fake
 * refuses so a test can see the limit), and `missing_charset` as a warning on success.
 */
export async function createFakeSlack(options: {
  botToken: string;
  channels: string[];
  delayMs?: number;
}): Promise<FakeSlack> {
  const messages: AcceptedMessage[] = [];
  let seq = 100;
  const server = await createFakeServer((req: RecordedRequest) => {
    if (req.path !== '/chat.postMessage') return slackError('unknown_method', { status: 404 });
    const auth = req.headers.authorization;
    if (auth === undefined || !auth.startsWith('Bearer ')) return slackError('not_authed');
    if (auth !== `Bearer ${options.botToken}`) return slackError('invalid_auth');
    const contentType = String(req.headers['content-type'] ?? '');
    if (!contentType.startsWith('application/json') || req.body === null || typeof req.body !== 'object') {
      return slackError('invalid_form_data');
    }
    const body = req.body as PostMessageBody;
    if (typeof body.channel !== 'string' || body.channel === '') return slackError('channel_not_found');
    if (typeof body.text !== 'string' || body.text.trim() === '') return slackError('no_text');
    if (body.text.length > MAX_TEXT_CHARS) return slackError('msg_too_long');
    if (!options.channels.includes(body.channel)) return slackError('channel_not_found');
    messages.push({ to: body.channel, text: body.text });
    const ts = `${Math.floor(Date.now() / 1000)}.${String(seq++).padStart(6, '0')}`;
    const warning = /charset=utf-8/i.test(contentType)
      ? {}
      : { warning: 'missing_charset', response_metadata: { warnings: ['missing_charset'] } };
    return {
      status: 200,
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
      body: {
        ok: true,
        channel: body.channel,
        ts,
        message: {
          type: 'message',
          subtype: 'bot_message',
          text: body.text,
          ts,
          user: 'U0HOOKGATE',
          bot_id: 'B0HOOKGATE',
          app_id: 'A0HOOKGATE',
        },
        ...warning,
      },
    };
  });
  return Object.assign(server, { messages });
}
