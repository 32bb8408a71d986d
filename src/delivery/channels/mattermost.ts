import type { ChannelsConfig } from '../../config/index.js';
import type { ChannelAdapter } from '../channel-adapter.js';
import { escapeMattermostBroadcasts } from './neutralize-broadcasts.js';
import { failOnStatus, requestJson } from './request-json.js';

/**
 * Mattermost 5.0+ stores posts of up to 16,383 runes (code points). We count UTF-16 units, which
 * are never fewer than code points, so a part that fits here fits there.
 */
const MATTERMOST_MAX_MESSAGE_CHARS = 16_383;

/**
 * No link previews: `remove_link_preview` hides the preview in the apps (every version);
 * `unsafe_links` makes recent servers skip fetching embeds and image sizes for the post at all.
 * Older servers keep an unknown prop and do nothing with it.
 */
const NO_PREVIEWS = { remove_link_preview: 'true', unsafe_links: 'true' } as const;

/** The v4 error body `{id, message, detailed_error, request_id, status_code}`. */
interface MattermostError {
  id?: unknown;
  message?: unknown;
}

/**
 * Mattermost REST v4: `POST {baseUrl}/api/v4/posts` with `{channel_id, message}` and a bot or
 * personal access token as a bearer. `to` is a channel id (26 characters). `baseUrl` is the
 * server's root; a trailing `/api/v4` is tolerated.
 */
export function createMattermostChannel(config: NonNullable<ChannelsConfig['mattermost']>): ChannelAdapter {
  const base = config.baseUrl.replace(/\/+$/, '').replace(/\/api\/v4$/, '');
  const url = `${base}/api/v4/posts`;
  const headers = { authorization: `Bearer ${config.token}` };
  return {
    name: 'mattermost',
    maxMessageChars: MATTERMOST_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      // Sender-shaped text must not notify a whole channel: @channel, @all and @here are made plain.
      const body = { channel_id: to, message: escapeMattermostBroadcasts(text), props: NO_PREVIEWS };
      const res = await requestJson('mattermost', url, { headers, body, signal });
      // Rate limits answer 429 with `Retry-After` and a plain-text body; failOnStatus reads both.
      failOnStatus('mattermost', res, describeMattermostError(res.body as MattermostError | null));
    },
  };
}

function describeMattermostError(err: MattermostError | null): string | undefined {
  if (typeof err?.message !== 'string') return undefined;
  // `detailed_error` is left out on purpose: older servers put the session token in it.
  return typeof err.id === 'string' && err.id !== '' ? `${err.message} (${err.id})` : err.message;
}
