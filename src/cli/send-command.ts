import { signRequest } from '../auth/index.js';
import { trimSlashes, type LoadedConfig } from '../config/index.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';
import { readPayload } from './read-payload.js';

/** How long `send` waits for the gateway's answer. */
const SEND_TIMEOUT_MS = 30_000;

/** Where the gateway of a config listens, as a client reaches it (a wildcard bind is reached on loopback). */
export function gatewayOrigin(loaded: LoadedConfig): string {
  const { bind, port } = loaded.config.gateway;
  const host = bind === '0.0.0.0' ? '127.0.0.1' : bind === '::' ? '::1' : bind;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Why a call to the gateway got no answer, for the operator: a refused connection most likely means no gateway. */
export function whyUnreachable(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED'
    ? 'connection refused; is the gateway running ("hookgate serve")?'
    : (error as Error).message;
}

/** `hookgate send HOOK`: posts a payload to the running gateway with the config's hook token. */
export async function sendCommand(
  configPath: string,
  hook: string,
  options: { data?: string | undefined; file?: string | undefined; sign?: boolean },
  deps: CliDeps,
): Promise<number> {
  // Text nested too deep is sent as it is: the gateway's own refusal (400 json_too_deep) is the answer printed.
  const payload = readPayload(options);
  if (payload.kind === 'unusable') {
    deps.stderr(`hookgate send: ${payload.message}\n`);
    return EXIT_USAGE;
  }
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const { hooks } = loaded.config;
  if (!hooks.enabled) {
    deps.stderr(`hookgate send: hooks are disabled in ${configPath} (hooks.enabled)\n`);
    return EXIT_FAILURE;
  }
  const name = hook.replace(/^\/+/, '');
  const url = `${gatewayOrigin(loaded)}${hooks.path}/${name}`;
  let auth: Record<string, string> = { authorization: `Bearer ${hooks.token ?? ''}` };
  if (options.sign === true) {
    // Signed the way the sender of the mapping serving this name would, with no hook token.
    const mapping = hooks.mappings.find(
      (m) => m.verify !== undefined && (m.match?.path === undefined || trimSlashes(m.match.path) === trimSlashes(name)),
    );
    if (mapping?.verify === undefined) {
      deps.stderr(`hookgate send: --sign: no mapping with verify serves "${name}" in ${configPath}\n`);
      return EXIT_FAILURE;
    }
    try {
      auth = signRequest(mapping.verify, payload.text, Date.now());
    } catch (error) {
      deps.stderr(`hookgate send: --sign: ${(error as Error).message}\n`);
      return EXIT_FAILURE;
    }
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: payload.text,
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
  } catch (error) {
    deps.stderr(`hookgate send: POST ${url}: ${whyUnreachable(error)}\n`);
    return EXIT_FAILURE;
  }
  const body = await res.text();
  deps.stdout(`${res.status} ${res.statusText}\n${body === '' ? '' : `${body}\n`}`);
  return res.ok ? EXIT_OK : EXIT_FAILURE;
}
