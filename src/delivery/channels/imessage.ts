import { randomUUID } from 'node:crypto';
import type { ChannelsConfig } from '../../config/index.js';
import { DeliveryError, type ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson } from './request-json.js';

/**
 * iMessage sets no documented length limit, and BlueBubbles none of its own; very long texts make
 * one tall bubble that is hard to read and slow to pass through AppleScript. 4000 characters per
 * bubble keeps each part readable and the script small.
 */
export const IMESSAGE_MAX_MESSAGE_CHARS = 4000;

/** BlueBubbles answers `{status, message, data}`, or `{status, message, error: {type, message}, data?}`. */
interface BlueBubblesAnswer {
  message?: unknown;
  error?: { type?: unknown; message?: unknown };
  data?: { error?: unknown } | null;
}

/**
 * The chat GUID for `to`: a GUID (`iMessage;-;+15551234567`, `iMessage;+;chat123…`,
 * `SMS;-;+15551234567`) is used as given; a bare phone number or email address becomes the 1:1
 * iMessage chat `iMessage;-;<address>`, which BlueBubbles can send to even before a chat exists.
 */
export function toChatGuid(to: string): string {
  const target = to.trim();
  return target.includes(';') ? target : `iMessage;-;${target}`;
}

/**
 * iMessage through a BlueBubbles server on a Mac: `POST {baseUrl}/api/v1/message/text` with the
 * server password in the query (BlueBubbles reads `password`, `guid` or `token` there; it has no
 * header auth). Sends with `method: "apple-script"`, which works on every install (the Private
 * API needs SIP disabled) and needs a fresh `tempGuid` per send: BlueBubbles refuses a tempGuid
 * it is still sending. The call returns once Messages has sent the text (or given up).
 */
export function createIMessageChannel(
  config: NonNullable<ChannelsConfig['imessage']>,
  deps: { newTempGuid?: () => string } = {},
): ChannelAdapter {
  const base = config.baseUrl.replace(/\/+$/, '');
  // The password is in the URL; error messages quote the body only, never the URL.
  const url = `${base}/api/v1/message/text?password=${encodeURIComponent(config.password)}`;
  const newTempGuid = deps.newTempGuid ?? randomUUID;
  return {
    name: 'imessage',
    maxMessageChars: IMESSAGE_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      const res = await requestJson('imessage', url, {
        body: { chatGuid: toChatGuid(to), tempGuid: newTempGuid(), message: text, method: 'apple-script' },
        signal,
      });
      const answer = res.body as BlueBubblesAnswer | null;
      const description = describeError(answer);
      // A 500 that carries the sent message with Messages' non-zero error code is a definite
      // refusal (e.g. the address is not on iMessage): retrying only adds another failed bubble.
      const messagesError = answer?.data?.error;
      if (res.status === 500 && typeof messagesError === 'number' && messagesError !== 0) {
        throw new DeliveryError(
          `imessage 500: ${description ?? 'Message Send Error'} (Messages error ${messagesError})`,
          {
            status: 500,
            retryable: false,
          },
        );
      }
      failOnStatus('imessage', res, description);
    },
  };
}

/** `Message Send Error: Failed to send message! …`: the summary, then the specific reason. */
function describeError(answer: BlueBubblesAnswer | null): string | undefined {
  const summary = typeof answer?.message === 'string' ? answer.message : undefined;
  const reason = typeof answer?.error?.message === 'string' ? answer.error.message : undefined;
  if (summary === undefined || reason === undefined || summary === reason) return reason ?? summary;
  return `${summary}: ${reason}`;
}
