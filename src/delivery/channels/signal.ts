import type { ChannelsConfig } from '../../config/index.js';
import { DeliveryError, type ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson } from './request-json.js';

/**
 * signal-cli sends a body of up to 2000 UTF-8 bytes inline (`MAX_MESSAGE_SIZE_BYTES`); anything
 * longer goes out as a trimmed body plus a long-text attachment, which linked desktop clients and
 * older apps may show as a file. 2000 characters keeps ordinary (ASCII) replies inline, one bubble
 * each, and never loses text when a reply is mostly non-ASCII: the attachment still carries it.
 */
export const SIGNAL_MAX_MESSAGE_CHARS = 2000;

/** Reasons signal-cli gives per recipient that a later attempt can clear. */
const TRANSIENT_REASONS = new Set(['NETWORK_FAILURE', 'RATE_LIMIT_FAILURE']);

/** `POST /v2/send` answers 201 `{timestamp, errors?}`; failures are `{error}` (400, 429). */
interface SignalAnswer {
  error?: unknown;
  errors?: { recipients?: Array<{ reason?: unknown }> };
}

/**
 * signal-cli REST API (bbernhard/signal-cli-rest-api): `POST {baseUrl}/v2/send` with
 * `{message, number, recipients: [to]}`, sent as the registered `account`. `to` is a phone number
 * in international form (`+4915…`); a group id (`group.…`) or username works the same way.
 * The REST API has no authentication of its own; keep it on a private network.
 */
export function createSignalChannel(config: NonNullable<ChannelsConfig['signal']>): ChannelAdapter {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/v2/send`;
  return {
    name: 'signal',
    maxMessageChars: SIGNAL_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      const res = await requestJson('signal', url, {
        body: { message: text, number: config.account, recipients: [to] },
        signal,
      });
      const answer = res.body as SignalAnswer | null;
      // Every failure, including "not registered", is a 400; only rate limiting has its own 429.
      failOnStatus('signal', res, typeof answer?.error === 'string' ? answer.error.trim() : undefined);
      // With several recipients signal-cli reports per-recipient failures inside a 201; with one
      // it fails the call instead, but a 201 that names our recipient as failed is still a failure.
      const failed = answer?.errors?.recipients?.[0];
      if (failed !== undefined) {
        const reason = typeof failed.reason === 'string' ? failed.reason : 'unknown reason';
        throw new DeliveryError(`signal ${res.status}: not delivered to ${to}: ${reason}`, {
          status: res.status,
          retryable: TRANSIENT_REASONS.has(reason),
        });
      }
    },
  };
}
