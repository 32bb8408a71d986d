import { randomBytes } from 'node:crypto';
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

export interface FakeMattermost extends FakeServer {
  messages: AcceptedMessage[];
}

// Mattermost ids: 26 characters of this base32 alphabet.
const ID_ALPHABET = 'ybndrfg8ejkmcpqxot1uwisza345h769';

/** A Mattermost-style 26-character id. */
export function mattermostId(): string {
  return [...randomBytes(26)].map((b) => ID_ALPHABET[b % 32]).join('');
}

/** An error the way the v4 API writes it: `{id, message, detailed_error, request_id, status_code}`. */
export function mattermostError(status: number, id: string, message: string, detailedError = ''): ScriptedResponse {
  return {
    status,
    body: { id, message, detailed_error: detailedError, request_id: mattermostId(), status_code: status },
  };
}

/**
 * A rate limit as the server's limiter sends it: 429, `X-Ratelimit-*` and `Retry-After` headers,
 * and the text "limit exceeded" (not the JSON error shape).
 */
export function mattermostRateLimit(retryAfterSeconds: number): ScriptedResponse {
  return {
    status: 429,
    body: 'limit exceeded',
    headers: {
      'retry-after': String(retryAfterSeconds),
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(retryAfterSeconds),
    },
  };
}

const MAX_MESSAGE_RUNES = 16_383;

interface CreatePostBody {
  channel_id?: unknown;
  message?: unknown;
}

/**
 * A fake Mattermost v4 API with Create Post at `{url}/api/v4/posts`. Knows one token
 * (`Authorization: Bearer <token>`, the prefix case-insensitive like the server) and the channels
 * in `channelIds`; answers the server's shapes: 401 session_expired, 400 invalid_body_param,
 * 403 permissions (what the server says for a channel the bot cannot post in, or that does not
 * exist), 400 `model.post.is_valid.msg.app_error` past 16,383 runes, 201 with the Post.
 */
export async function createFakeMattermost(options: {
  token: string;
  channelIds: string[];
  delayMs?: number;
}): Promise<FakeMattermost> {
  const messages: AcceptedMessage[] = [];
  const botUserId = mattermostId();
  const server = await createFakeServer((req: RecordedRequest) => {
    if (!req.path.startsWith('/api/v4/'))
      return mattermostError(404, 'api.context.404.app_error', 'Sorry, we could not find the page.');
    const auth = /^(bearer|token) (.+)$/i.exec(req.headers.authorization ?? '');
    if (auth === null || auth[2] !== options.token) {
      return mattermostError(
        401,
        'api.context.session_expired.app_error',
        'Invalid or expired session, please login again.',
      );
    }
    if (req.path !== '/api/v4/posts')
      return mattermostError(404, 'api.context.404.app_error', 'Sorry, we could not find the page.');
    if (req.method !== 'POST') return mattermostError(405, 'api.context.405.app_error', 'Method not allowed.');
    const body = req.body as CreatePostBody | null;
    if (
      body === null ||
      typeof body !== 'object' ||
      typeof body.channel_id !== 'string' ||
      typeof body.message !== 'string'
    ) {
      return mattermostError(
        400,
        'api.context.invalid_body_param.app_error',
        'Invalid or missing post in request body.',
      );
    }
    if (!options.channelIds.includes(body.channel_id)) {
      return mattermostError(
        403,
        'api.context.permissions.app_error',
        'You do not have the appropriate permissions.',
        `userId=${botUserId}, permission=create_post`,
      );
    }
    if ([...body.message].length > MAX_MESSAGE_RUNES) {
      return mattermostError(400, 'model.post.is_valid.msg.app_error', 'Invalid message', 'id=');
    }
    messages.push({ to: body.channel_id, text: body.message });
    const now = Date.now();
    return {
      status: 201,
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
      body: {
        id: mattermostId(),
        create_at: now,
        update_at: now,
        edit_at: 0,
        delete_at: 0,
        is_pinned: false,
        user_id: botUserId,
        channel_id: body.channel_id,
        root_id: '',
        original_id: '',
        message: body.message,
        type: '',
        props: { from_bot: 'true' },
        hashtags: '',
        pending_post_id: '',
        reply_count: 0,
        metadata: {},
      },
    };
  });
  return Object.assign(server, { messages });
}
