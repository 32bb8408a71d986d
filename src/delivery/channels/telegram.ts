import type { ChannelsConfig } from '../../config/index.js';
import type { ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson } from './request-json.js';

const TELEGRAM_DEFAULT_BASE_URL = 'https://api.telegram.org';
/** Bot API `sendMessage`: "1-4096 characters after entities parsing". */
const TELEGRAM_MAX_MESSAGE_CHARS = 4096;

/** The Bot API's error answer: `{ok:false, error_code, description, parameters?}`. */
interface TelegramError {
  description?: unknown;
  parameters?: { retry_after?: unknown; migrate_to_chat_id?: unknown };
}

/**
 * Telegram Bot API: `POST {baseUrl}/bot<token>/sendMessage` with `{chat_id, text}`. `to` is a
 * chat id (`123456`, `-100…`) or a public `@channelusername`; it is sent as a string, which the
 * API accepts and which keeps 64-bit ids exact. No `parse_mode`: replies go out as plain text, so
 * a stray `*` or `_` cannot make the API refuse the message.
 */
export function createTelegramChannel(config: NonNullable<ChannelsConfig['telegram']>): ChannelAdapter {
  const base = (config.baseUrl ?? TELEGRAM_DEFAULT_BASE_URL).replace(/\/+$/, '');
  // The token is part of the path; it never appears in an error message (we only quote the body).
  const url = `${base}/bot${config.botToken}/sendMessage`;
  return {
    name: 'telegram',
    maxMessageChars: TELEGRAM_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      // No link preview: Telegram would fetch the page a link in the reply points to (Bot API 7.0+).
      const body = { chat_id: to, text, link_preview_options: { is_disabled: true } };
      const res = await requestJson('telegram', url, { body, signal });
      const err = res.body as TelegramError | null;
      const retryAfter = err?.parameters?.retry_after;
      failOnStatus('telegram', res, describeTelegramError(err), {
        bodyRetryAfterSeconds: typeof retryAfter === 'number' && retryAfter >= 0 ? retryAfter : undefined,
      });
    },
  };
}

function describeTelegramError(err: TelegramError | null): string | undefined {
  if (typeof err?.description !== 'string') return undefined;
  // A group that became a supergroup has a new id; say which, so the operator can fix `to`.
  const migrated = err.parameters?.migrate_to_chat_id;
  return typeof migrated === 'number' ? `${err.description} (migrate_to_chat_id ${migrated})` : err.description;
}
