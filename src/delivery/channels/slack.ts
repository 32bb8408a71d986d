import type { ChannelsConfig } from '../../config/index.js';
import { DeliveryError, type ChannelAdapter } from '../channel-adapter.js';
import { escapeSlackBroadcasts } from './neutralize-broadcasts.js';
import { failOnStatus, requestJson } from './request-json.js';

const SLACK_DEFAULT_BASE_URL = 'https://slack.com/api';
/**
 * `chat.postMessage` truncates `text` past 40,000 characters (with a `message_truncated`
 * warning). Slack suggests 4,000 "for best results", but that is advice, not a limit: we split
 * only where Slack would otherwise cut.
 */
const SLACK_MAX_MESSAGE_CHARS = 40_000;

/**
 * Errors that Slack documents as temporary and after which nothing was posted. Others are final;
 * `internal_error` and `fatal_error` say the post may have partly happened, so a retry could
 * post twice.
 */
const TRANSIENT_ERRORS = new Set(['ratelimited', 'service_unavailable']);

/** Every Web API answer: `{ok, error?, response_metadata?: {messages?}}`. */
interface SlackAnswer {
  ok?: unknown;
  error?: unknown;
  response_metadata?: { messages?: unknown };
}

/**
 * Slack Web API: `POST {baseUrl}/chat.postMessage` with `{channel, text}` and the bot token as a
 * bearer. `to` is a channel id (`C…`, `G…`, `D…`) or a user id for the app's DM. Slack answers
 * most errors with HTTP 200 and `ok:false`; only rate limits come as HTTP 429 with `Retry-After`.
 */
export function createSlackChannel(config: NonNullable<ChannelsConfig['slack']>): ChannelAdapter {
  const url = `${(config.baseUrl ?? SLACK_DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat.postMessage`;
  // Without the charset Slack still reads the body but warns `missing_charset`.
  const headers = { authorization: `Bearer ${config.botToken}`, 'content-type': 'application/json; charset=utf-8' };
  return {
    name: 'slack',
    maxMessageChars: SLACK_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      // Sender-shaped text must not notify a whole channel: the commands are written out, and
      // plain @channel is never linked. No unfurls: Slack would fetch the page (or the media) a
      // link in the reply points to.
      const body = {
        channel: to,
        text: escapeSlackBroadcasts(text),
        link_names: false,
        unfurl_links: false,
        unfurl_media: false,
      };
      const res = await requestJson('slack', url, { headers, body, signal });
      const answer = res.body as SlackAnswer | null;
      const error = typeof answer?.error === 'string' ? answer.error : undefined;
      failOnStatus('slack', res, error === undefined ? undefined : describeSlackError(error, answer));
      if (answer?.ok === true) return;
      throw new DeliveryError(
        `slack ${res.status}: ${error === undefined ? 'answer without ok:true' : describeSlackError(error, answer)}`,
        {
          status: res.status,
          retryable: error !== undefined && TRANSIENT_ERRORS.has(error),
        },
      );
    },
  };
}

function describeSlackError(error: string, answer: SlackAnswer | null): string {
  // `invalid_arguments` and friends explain themselves in `response_metadata.messages`.
  const messages = answer?.response_metadata?.messages;
  const details = Array.isArray(messages) ? messages.filter((m): m is string => typeof m === 'string').slice(0, 3) : [];
  return details.length === 0 ? error : `${error} (${details.join('; ')})`;
}
