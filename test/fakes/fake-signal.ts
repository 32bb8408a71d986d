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

export interface FakeSignal extends FakeServer {
  messages: AcceptedMessage[];
}

/** An error the way signal-cli-rest-api writes it: `{error}`, whatever went wrong. */
export function signalError(status: number, error: string, headers?: Record<string, string>): ScriptedResponse {
  return { status, body: { error }, ...(headers === undefined ? {} : { headers }) };
}

/** The 429 signal-cli-rest-api gives when Signal's servers rate-limit the account. */
export function signalRateLimit(account: string, headers?: Record<string, string>): ScriptedResponse {
  return {
    status: 429,
    body: {
      error:
        "Failed to send message due to rate limiting. Use the attached challenge tokens to lift the rate limit restrictions via the '/v1/accounts/{number}/rate-limit-challenge' endpoint.",
      challenge_tokens: ['5b1b8f9e-1d0a-4c57-9a65-2f0c9d1e4b7a'],
      account,
    },
    ...(headers === undefined ? {} : { headers }),
  };
}

interface SendV2Body {
  number?: unknown;
  recipients?: unknown;
  message?: unknown;
}

/**
 * A fake signal-cli REST API with `POST {url}/v2/send`, linked to one `account`, that knows the
 * Signal users in `registered`. Answers the API's shapes: 201 `{timestamp}`; 400 `{error}` for a
 * malformed body, an unknown account or an unregistered recipient.
 *
 * One rule is the fake's own: a message over `maxMessageChars` is refused. signal-cli itself
 * accepts it and moves the overflow into a long-text attachment; refusing lets tests prove the
 * adapter keeps every message to one inline body.
 */
export function createFakeSignal(options: {
  account: string;
  registered: string[];
  /** @default 2000 */
  maxMessageChars?: number;
}): Promise<FakeSignal> {
  const maxChars = options.maxMessageChars ?? 2000;
  const registered = new Set(options.registered);
  const messages: AcceptedMessage[] = [];
  const handle = (req: RecordedRequest): ScriptedResponse => {
    // gin's own 404 is plain text; the fake keeps it as a JSON string.
    if (req.method !== 'POST' || req.path !== '/v2/send') return { status: 404, body: '404 page not found' };
    const body = req.body as SendV2Body | null;
    if (
      body === null ||
      typeof body !== 'object' ||
      typeof body.message !== 'string' ||
      typeof body.number !== 'string'
    ) {
      return signalError(400, "Couldn't process request - invalid request");
    }
    if (!Array.isArray(body.recipients) || body.recipients.length === 0) {
      return signalError(400, "Couldn't process request - please provide at least one recipient");
    }
    if (body.number === '') return signalError(400, "Couldn't process request - please provide a valid number");
    if (body.number !== options.account) return signalError(400, `User ${body.number} is not registered.`);
    const to = body.recipients[0];
    if (body.recipients.length !== 1 || typeof to !== 'string')
      return signalError(400, "Couldn't process request - invalid request");
    if (!registered.has(to)) return signalError(400, `The user ${to} is not registered.`);
    if (body.message.length > maxChars) {
      return signalError(
        400,
        `Failed to send message: body is ${body.message.length} characters, over the fake's ${maxChars}`,
      );
    }
    messages.push({ to, text: body.message });
    return { status: 201, body: { timestamp: String(1_700_000_000_000 + messages.length) } };
  };
  return createFakeServer(handle).then((server) => Object.assign(server, { messages }));
}
