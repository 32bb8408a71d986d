import type { ChannelsConfig } from '../../config/index.js';
import { DeliveryError, type ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson, type JsonResponse } from './request-json.js';

const WHATSAPP_DEFAULT_BASE_URL = 'https://graph.facebook.com/v21.0';
/** Cloud API text messages: `text.body` holds at most 4096 characters. */
export const WHATSAPP_MAX_MESSAGE_CHARS = 4096;

/**
 * Graph error codes that mean "too fast, try later". Meta answers several of them with HTTP 400,
 * which on its own would look final: 4 (app call rate), 80007 (WhatsApp Business Account rate),
 * 130429 (Cloud API throughput), 131056 (pair rate: one business number to one user).
 */
const THROTTLING_CODES = new Set([4, 80007, 130429, 131056]);
/** The pair rate allows about one message every 6 s to the same user; wait that long at least. */
const PAIR_RATE_CODE = 131056;
const PAIR_RATE_WAIT_MS = 6000;

/** Graph API error body: `{error: {message, type, code, error_subcode?, error_data?, fbtrace_id}}`. */
interface GraphError {
  error?: {
    message?: unknown;
    code?: unknown;
    error_subcode?: unknown;
    error_data?: { details?: unknown };
    fbtrace_id?: unknown;
  };
}

/**
 * WhatsApp Cloud API: `POST {baseUrl}/{phoneNumberId}/messages` with a bearer `accessToken` and a
 * text message. `to` is the user's phone number in international form (`+15551234567` or
 * `15551234567`). Link previews are off, so a URL in a reply does not turn into a card. Outside
 * the 24-hour customer-service window Meta refuses free text (templates only); that arrives as a
 * 400 here and is not retried.
 */
export function createWhatsAppChannel(config: NonNullable<ChannelsConfig['whatsapp']>): ChannelAdapter {
  const base = (config.baseUrl ?? WHATSAPP_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const url = `${base}/${encodeURIComponent(config.phoneNumberId)}/messages`;
  const headers = { authorization: `Bearer ${config.accessToken}` };
  return {
    name: 'whatsapp',
    maxMessageChars: WHATSAPP_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      const res = await requestJson('whatsapp', url, {
        headers,
        body: {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to,
          type: 'text',
          text: { preview_url: false, body: text },
        },
        signal,
      });
      failOnGraphError(res);
    },
  };
}

function failOnGraphError(res: JsonResponse): void {
  const err = (res.body as GraphError | null)?.error;
  const code = typeof err?.code === 'number' ? err.code : undefined;
  try {
    failOnStatus('whatsapp', res, describeGraphError(err, code));
  } catch (error) {
    if (!(error instanceof DeliveryError) || code === undefined || !THROTTLING_CODES.has(code)) throw error;
    const retryAfterMs = Math.max(error.retryAfterMs ?? 0, code === PAIR_RATE_CODE ? PAIR_RATE_WAIT_MS : 0);
    throw new DeliveryError(error.message, {
      ...(error.status === undefined ? {} : { status: error.status }),
      retryable: true,
      ...(retryAfterMs > 0 ? { retryAfterMs } : {}),
    });
  }
}

/** `(#131030) Recipient phone number not in allowed list: <details> [code 131030]`. */
function describeGraphError(err: GraphError['error'], code: number | undefined): string | undefined {
  if (typeof err?.message !== 'string') return undefined;
  const details = err.error_data?.details;
  const subcode = typeof err.error_subcode === 'number' ? `/${err.error_subcode}` : '';
  let text = err.message;
  if (typeof details === 'string' && details !== '' && details !== err.message) text += `: ${details}`;
  return code === undefined ? text : `${text} [code ${code}${subcode}]`;
}
