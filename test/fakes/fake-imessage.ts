import { randomUUID } from 'node:crypto';
import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** A message the fake accepted: `to` is the chat GUID it went to. */
export interface AcceptedMessage {
  to: string;
  text: string;
}

export interface FakeIMessage extends FakeServer {
  messages: AcceptedMessage[];
}

/** BlueBubbles' error types (`error.type`). */
export type BlueBubblesErrorType = 'Server Error' | 'iMessage Error' | 'Validation Error' | 'Authentication Error';

/** An error the way BlueBubbles writes it: `{status, message, error: {type, message}, data?}`. */
export function blueBubblesError(
  status: number,
  message: string,
  error: { type: BlueBubblesErrorType; message: string },
  options: { data?: unknown; headers?: Record<string, string> } = {},
): ScriptedResponse {
  return {
    status,
    body: { status, message, error, ...(options.data === undefined ? {} : { data: options.data }) },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  };
}

const badRequest = (reason: string): ScriptedResponse =>
  blueBubblesError(400, "You've made a bad request! Please check your request params & body", {
    type: 'Validation Error',
    message: reason,
  });

interface SendTextBody {
  chatGuid?: unknown;
  tempGuid?: unknown;
  message?: unknown;
  method?: unknown;
}

/** A sent message as BlueBubbles serializes it (the fields a client reads). */
function sentMessage(
  chatGuid: string,
  text: string,
  tempGuid: string | undefined,
  error: number,
): Record<string, unknown> {
  return {
    originalROWID: 4711,
    guid: randomUUID().toUpperCase(),
    text,
    handle: null,
    handleId: 0,
    attachments: [],
    subject: null,
    error,
    dateCreated: 1_700_000_000_000,
    dateDelivered: null,
    dateRead: null,
    isFromMe: true,
    chats: [{ guid: chatGuid }],
    ...(tempGuid === undefined ? {} : { tempGuid }),
  };
}

/**
 * A fake BlueBubbles server with `POST {url}/api/v1/message/text`. Checks the server password in
 * the query (`password`, `guid` or `token`) and the body the way the server's validator does,
 * and answers its shapes: 200 `{status, message: "Message sent!", data}`; 401 for a missing or
 * wrong password; 400 validation errors; 500 "Message Send Error" for a GUID without `;` and,
 * carrying the failed message with Messages' error code, for an address in `unreachable`.
 *
 * One rule is the fake's own: a message over `maxMessageChars` is refused with a validation
 * error. BlueBubbles has no limit; the fake enforces the adapter's bubble size so tests prove it.
 */
export function createFakeIMessage(options: {
  password: string;
  /** Addresses Messages cannot deliver to (not on iMessage). */
  unreachable?: string[];
  /** @default 4000 */
  maxMessageChars?: number;
}): Promise<FakeIMessage> {
  const maxChars = options.maxMessageChars ?? 4000;
  const unreachable = new Set(options.unreachable ?? []);
  const messages: AcceptedMessage[] = [];
  const handle = (req: RecordedRequest): ScriptedResponse => {
    const url = new URL(req.path, 'http://fake');
    // Koa's own 404 is the text "Not Found"; the fake keeps it as a JSON string.
    if (req.method !== 'POST' || url.pathname !== '/api/v1/message/text') return { status: 404, body: 'Not Found' };
    const token = url.searchParams.get('guid') ?? url.searchParams.get('password') ?? url.searchParams.get('token');
    if (token === null || token === '') {
      return blueBubblesError(401, 'You are not authorized to access this resource', {
        type: 'Authentication Error',
        message: 'Missing server password!',
      });
    }
    if (token.trim() !== options.password.trim()) {
      return blueBubblesError(401, 'You are not authorized to access this resource', {
        type: 'Authentication Error',
        message: 'Unauthorized',
      });
    }
    const body = (req.body ?? {}) as SendTextBody;
    if (typeof body.chatGuid !== 'string' || body.chatGuid === '') return badRequest('The chatGuid field is required.');
    if (body.tempGuid !== undefined && typeof body.tempGuid !== 'string')
      return badRequest('The tempGuid must be a string.');
    const tempGuid = typeof body.tempGuid === 'string' && body.tempGuid !== '' ? body.tempGuid : undefined;
    if (body.message === undefined) return badRequest('The message field must be present.');
    if (typeof body.message !== 'string') return badRequest('The message must be a string.');
    if (body.method !== undefined && body.method !== 'apple-script' && body.method !== 'private-api') {
      return badRequest('The selected method is invalid.');
    }
    const method = body.method ?? 'apple-script';
    if (method === 'apple-script' && tempGuid === undefined) {
      return badRequest("A 'tempGuid' is required when sending via AppleScript");
    }
    if (body.message === '')
      return badRequest(
        `A 'message' is required when sending via ${method === 'apple-script' ? 'AppleScript' : 'the Private API'}`,
      );
    if (body.message.length > maxChars)
      return badRequest(`Message is ${body.message.length} characters, over the fake's ${maxChars}`);
    if (!body.chatGuid.includes(';')) {
      return blueBubblesError(500, 'Message Send Error', {
        type: 'iMessage Error',
        message: `Invalid GUID! Can't send message to: ${body.chatGuid}`,
      });
    }
    const address = body.chatGuid.split(';-;')[1];
    if (address !== undefined && unreachable.has(address)) {
      return blueBubblesError(
        500,
        'Message Send Error',
        { type: 'iMessage Error', message: 'Failed to send message! See attached message error code.' },
        { data: sentMessage(body.chatGuid, body.message, tempGuid, 22) },
      );
    }
    messages.push({ to: body.chatGuid, text: body.message });
    return {
      status: 200,
      body: { status: 200, message: 'Message sent!', data: sentMessage(body.chatGuid, body.message, tempGuid, 0) },
    };
  };
  return createFakeServer(handle).then((server) => Object.assign(server, { messages }));
}
