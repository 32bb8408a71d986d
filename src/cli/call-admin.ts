import type { LoadedConfig } from '../config/index.js';
import type { CliDeps } from './cli-deps.js';
import { gatewayOrigin, whyUnreachable } from './send-command.js';

/** How long one admin API call may take. */
const ADMIN_TIMEOUT_MS = 10_000;

/**
 * Calls the admin API of the gateway a config describes (its address, its `gateway.auth.token`) and
 * resolves with the answer's body; reports and resolves `null` when the call fails or is refused.
 */
export async function callAdmin(
  loaded: LoadedConfig,
  method: 'GET' | 'POST',
  path: string,
  deps: CliDeps,
): Promise<Record<string, unknown> | null> {
  const token = loaded.config.gateway.auth.token;
  if (token === undefined) {
    deps.stderr('hookgate: gateway.auth.token is not set, so the admin API this needs is off\n');
    return null;
  }
  const url = `${gatewayOrigin(loaded)}/admin/api${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
  } catch (error) {
    deps.stderr(`hookgate: ${method} ${url}: ${whyUnreachable(error)}\n`);
    return null;
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok || body === null) {
    const error = typeof body?.['error'] === 'string' ? body['error'] : `HTTP ${res.status}`;
    deps.stderr(`hookgate: ${method} ${url}: ${error}\n`);
    return null;
  }
  return body;
}
