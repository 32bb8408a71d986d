import type { ChannelsConfig } from '../../config/index.js';
import type { ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson } from './request-json.js';

const DISCORD_DEFAULT_BASE_URL = 'https://discord.com/api/v10';
/** Create Message: `content` is "up to 2000 characters". */
const DISCORD_MAX_MESSAGE_CHARS = 2000;
/** The `SUPPRESS_EMBEDS` message flag: no link embeds, so Discord fetches no page a reply links to. */
const SUPPRESS_EMBEDS = 1 << 2;
// Discord asks bots to send `DiscordBot ($url, $versionNumber)`; requests without it may be blocked.
const USER_AGENT = 'DiscordBot (hookgate, 0.1.0)';

/** Error body `{code, message, errors?}`, or the 429 body `{message, retry_after, global}`. */
interface DiscordError {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
  retry_after?: unknown;
  global?: unknown;
}

/**
 * Discord REST: `POST {baseUrl}/channels/{to}/messages` with `{content}` as the bot. `to` is a
 * channel id (a DM channel id works too). Mentions are not parsed (`allowed_mentions.parse: []`)
 * so an agent's reply cannot ping `@everyone` or a role.
 */
export function createDiscordChannel(config: NonNullable<ChannelsConfig['discord']>): ChannelAdapter {
  const base = (config.baseUrl ?? DISCORD_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers = { authorization: `Bot ${config.botToken}`, 'user-agent': USER_AGENT };
  return {
    name: 'discord',
    maxMessageChars: DISCORD_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      const url = `${base}/channels/${encodeURIComponent(to)}/messages`;
      const res = await requestJson('discord', url, {
        headers,
        body: { content: text, allowed_mentions: { parse: [] }, flags: SUPPRESS_EMBEDS },
        signal,
      });
      const err = res.body as DiscordError | null;
      // The body's `retry_after` is a float; the `Retry-After` header is rounded up to whole
      // seconds, so the body is the finer hint. The header still covers a 429 without JSON.
      const retryAfter = err?.retry_after;
      failOnStatus('discord', res, describeDiscordError(err), {
        bodyRetryAfterSeconds: typeof retryAfter === 'number' && retryAfter >= 0 ? retryAfter : undefined,
      });
    },
  };
}

function describeDiscordError(err: DiscordError | null): string | undefined {
  if (typeof err?.message !== 'string') return undefined;
  let out = err.message;
  if (typeof err.code === 'number' && err.code !== 0) out += ` (code ${err.code})`;
  if (err.global === true) out += ' (global rate limit)';
  const details = flattenFieldErrors(err.errors, '');
  if (details.length > 0) out += `: ${details.slice(0, 3).join('; ')}`;
  return out;
}

/**
 * Form errors (code 50035) nest per field: `{content: {_errors: [{code, message}]}}`. Flattens
 * them to `content: Must be 2000 or fewer in length.` so the operator sees which field failed.
 */
function flattenFieldErrors(node: unknown, path: string): string[] {
  if (node === null || typeof node !== 'object') return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === '_errors' && Array.isArray(value)) {
      for (const e of value as Array<{ message?: unknown }>) {
        if (typeof e?.message === 'string') out.push(path === '' ? e.message : `${path}: ${e.message}`);
      }
    } else {
      out.push(...flattenFieldErrors(value, path === '' ? key : `${path}.${key}`));
    }
  }
  return out;
}
