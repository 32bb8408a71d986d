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

export interface FakeWhatsApp extends FakeServer {
  messages: AcceptedMessage[];
}

const fbtraceId = (): string => randomBytes(12).toString('base64url');

/**
 * An error the way the Graph API writes it. `details` goes into `error_data`, where the Cloud API
 * puts its explanation; the code title is part of `message`.
 */
export function whatsappError(
  status: number,
  error: { code: number; message: string; type?: string; subcode?: number; details?: string },
  headers?: Record<string, string>,
): ScriptedResponse {
  return {
    status,
    body: {
      error: {
        message: error.message,
        type: error.type ?? 'OAuthException',
        code: error.code,
        ...(error.details === undefined
          ? {}
          : { error_data: { messaging_product: 'whatsapp', details: error.details } }),
        ...(error.subcode === undefined ? {} : { error_subcode: error.subcode }),
        fbtrace_id: fbtraceId(),
      },
    },
    ...(headers === undefined ? {} : { headers }),
  };
}

/** 130429, Cloud API throughput reached. Meta sends it with HTTP 400; tests may pick another status. */
export function whatsappThroughputLimit(status = 400, headers?: Record<string, string>): ScriptedResponse {
  return whatsappError(
    status,
    {
      code: 130429,
      message: '(#130429) Rate limit hit',
      details:
        'Message failed to send because there were too many messages sent from this phone number in a short period of time',
    },
    headers,
  );
}

/** 131056, too many messages from this business number to the same user (HTTP 400). */
export function whatsappPairRateLimit(): ScriptedResponse {
  return whatsappError(400, {
    code: 131056,
    message: '(#131056) (Business Account, Consumer Account) pair rate limit hit',
    details:
      'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time',
  });
}

interface SendBody {
  messaging_product?: unknown;
  recipient_type?: unknown;
  to?: unknown;
  type?: unknown;
  text?: { body?: unknown; preview_url?: unknown };
}

const invalidParameter = (details: string): ScriptedResponse =>
  whatsappError(400, { code: 100, message: '(#100) Invalid parameter', details });

/**
 * A fake WhatsApp Cloud API: `POST {url}/{phoneNumberId}/messages` for one business number, with
 * one valid access token, that may message the test numbers in `allowedRecipients` (compared by
 * digits, as the Cloud API does). Answers the Graph shapes: 200 `{messaging_product, contacts,
 * messages}`; 401 code 190 for a bad token; 400 code 100 for a malformed body or a body over
 * `maxMessageChars`; 400 code 131030 for a recipient outside the allowed list.
 */
export function createFakeWhatsApp(options: {
  accessToken: string;
  phoneNumberId: string;
  allowedRecipients: string[];
  /** @default 4096 */
  maxMessageChars?: number;
}): Promise<FakeWhatsApp> {
  const maxChars = options.maxMessageChars ?? 4096;
  const digits = (s: string): string => s.replace(/\D/g, '');
  const allowed = new Set(options.allowedRecipients.map(digits));
  const messages: AcceptedMessage[] = [];
  const handle = (req: RecordedRequest): ScriptedResponse => {
    const match = /^\/v\d+\.\d+\/([^/?]+)\/messages$/.exec(req.path) ?? /^\/([^/?]+)\/messages$/.exec(req.path);
    const objectId = match === null ? req.path : decodeURIComponent(match[1]!);
    if (req.method !== 'POST' || match === null || objectId !== options.phoneNumberId) {
      return whatsappError(400, {
        code: 100,
        subcode: 33,
        type: 'GraphMethodException',
        message: `Unsupported post request. Object with ID '${objectId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      });
    }
    if (req.headers.authorization !== `Bearer ${options.accessToken}`) {
      return whatsappError(401, { code: 190, message: 'Invalid OAuth access token - Cannot parse access token' });
    }
    const body = req.body as SendBody | null;
    if (body === null || typeof body !== 'object') return invalidParameter('Request body must be a JSON object');
    if (body.messaging_product !== 'whatsapp') {
      return whatsappError(400, { code: 100, message: '(#100) The parameter messaging_product is required.' });
    }
    if (typeof body.to !== 'string' || body.to === '')
      return whatsappError(400, { code: 100, message: '(#100) The parameter to is required.' });
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual')
      return invalidParameter("Param recipient_type must be 'individual'");
    if (body.type !== 'text') return invalidParameter("This fake accepts only type 'text'");
    const text = body.text?.body;
    if (typeof text !== 'string' || text === '')
      return invalidParameter("Param text['body'] must be a non-empty string");
    if (text.length > maxChars)
      return invalidParameter(`Param text['body'] must be at most ${maxChars} characters long.`);
    if (body.text?.preview_url !== undefined && typeof body.text.preview_url !== 'boolean') {
      return invalidParameter("Param text['preview_url'] must be a boolean");
    }
    if (!allowed.has(digits(body.to))) {
      return whatsappError(400, {
        code: 131030,
        message: '(#131030) Recipient phone number not in allowed list',
        details:
          'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.',
      });
    }
    messages.push({ to: body.to, text });
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: digits(body.to) }],
        messages: [{ id: `wamid.${randomBytes(24).toString('base64url')}` }],
      },
    };
  };
  return createFakeServer(handle).then((server) => Object.assign(server, { messages }));
}
