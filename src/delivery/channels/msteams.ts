import type { ChannelsConfig } from '../../config/index.js';
import { DeliveryError, type ChannelAdapter } from '../channel-adapter.js';
import { failOnStatus, requestJson, type JsonResponse } from './request-json.js';

/**
 * Teams refuses an activity over about 28 KB, counted on the stored message, after Markdown has
 * become HTML. 8000 characters stay under 24 KB even when every character takes 3 UTF-8 bytes
 * (CJK), leaving room for the activity envelope and the markup Markdown expands into.
 */
export const MSTEAMS_MAX_MESSAGE_CHARS = 8000;
const BOT_FRAMEWORK_SCOPE = 'https://api.botframework.com/.default';
/** Multi-tenant bots get their token from the `botframework.com` tenant. */
const DEFAULT_TENANT = 'botframework.com';
/** Refresh this long before the token expires, so a token never expires in flight. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/** Entra ID token answer, or its error `{error, error_description, error_codes, …}`. */
interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
  error?: unknown;
  error_description?: unknown;
}

/** Bot Connector error `{error: {code, message}}`; its 401 is ASP.NET's `{message}`. */
interface ConnectorError {
  error?: { code?: unknown; message?: unknown };
  message?: unknown;
}

interface CachedToken {
  token: string;
  refreshAt: number;
}

/**
 * Microsoft Teams through the Bot Framework Connector. Gets an app token by client credentials
 * (`appId`/`appPassword`, from `tokenUrl` or the tenant's Entra ID endpoint), caches it until
 * shortly before it expires, then `POST {serviceUrl}/v3/conversations/{to}/activities` with a
 * Markdown message. `to` is a conversation id (`19:…@thread.tacv2`, `a:1…`), from an activity the
 * bot received or from creating a conversation; it is URL-encoded into the path. A 401 from the
 * connector with a cached token (revoked, or the secret rotated) drops it and retries once.
 */
export function createMsTeamsChannel(
  config: NonNullable<ChannelsConfig['msteams']>,
  deps: { now: () => number } = { now: Date.now },
): ChannelAdapter {
  const tenant = config.tenantId ?? DEFAULT_TENANT;
  const tokenUrl =
    config.tokenUrl ?? `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;
  const serviceUrl = config.serviceUrl.replace(/\/+$/, '');
  let cached: CachedToken | undefined;
  // Sends that find no token share one request for it instead of each asking.
  let pending: Promise<CachedToken> | undefined;

  async function requestToken(signal: AbortSignal): Promise<CachedToken> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: config.appId,
      client_secret: config.appPassword,
      scope: BOT_FRAMEWORK_SCOPE,
    });
    const requestedAt = deps.now();
    const res = await requestJson('msteams', tokenUrl, { form, signal });
    const answer = res.body as TokenAnswer | null;
    failOnStatus(
      'msteams',
      res,
      `token request failed: ${describeTokenError(answer) ?? (res.text.slice(0, 200) || 'no details')}`,
    );
    const expiresInSeconds = Number(answer?.expires_in);
    if (typeof answer?.access_token !== 'string' || answer.access_token === '' || !(expiresInSeconds > 0)) {
      throw new DeliveryError(`msteams ${res.status}: token answer has no access_token/expires_in`, {
        status: res.status,
        retryable: false,
      });
    }
    const lifetimeMs = expiresInSeconds * 1000;
    return {
      token: answer.access_token,
      refreshAt: requestedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2),
    };
  }

  /** The cached token if still good, else a new one; `fresh` tells which. */
  async function getToken(signal: AbortSignal): Promise<{ token: string; fresh: boolean }> {
    if (cached !== undefined && deps.now() < cached.refreshAt) return { token: cached.token, fresh: false };
    pending ??= requestToken(signal).finally(() => {
      pending = undefined;
    });
    cached = await pending;
    return { token: cached.token, fresh: true };
  }

  function postActivity(url: string, token: string, text: string, signal: AbortSignal): Promise<JsonResponse> {
    return requestJson('msteams', url, {
      headers: { authorization: `Bearer ${token}` },
      body: { type: 'message', text, textFormat: 'markdown' },
      signal,
    });
  }

  return {
    name: 'msteams',
    maxMessageChars: MSTEAMS_MAX_MESSAGE_CHARS,
    async send(to, text, signal) {
      const url = `${serviceUrl}/v3/conversations/${encodeURIComponent(to)}/activities`;
      const first = await getToken(signal);
      let res = await postActivity(url, first.token, text, signal);
      if (res.status === 401 && !first.fresh) {
        if (cached?.token === first.token) cached = undefined;
        const second = await getToken(signal);
        res = await postActivity(url, second.token, text, signal);
      }
      failOnStatus('msteams', res, describeConnectorError(res.body as ConnectorError | null));
    },
  };
}

/** `invalid_client: AADSTS7000215: Invalid client secret provided. …` (first line only). */
function describeTokenError(answer: TokenAnswer | null): string | undefined {
  const code = typeof answer?.error === 'string' ? answer.error : undefined;
  // Entra ID appends "\r\nTrace ID: …\r\nCorrelation ID: …\r\nTimestamp: …" to the description.
  const description =
    typeof answer?.error_description === 'string' ? answer.error_description.split(/\r?\n/)[0] : undefined;
  if (code === undefined || description === undefined) return description ?? code;
  return `${code}: ${description}`;
}

/** `ConversationNotFound: Conversation not found.` */
function describeConnectorError(answer: ConnectorError | null): string | undefined {
  const code = answer?.error?.code;
  const message = answer?.error?.message ?? answer?.message;
  if (typeof message !== 'string') return typeof code === 'string' ? code : undefined;
  return typeof code === 'string' ? `${code}: ${message}` : message;
}
