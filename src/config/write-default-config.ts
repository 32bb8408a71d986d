import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateToken } from '../common/ids.js';

/** Tokens of a freshly written config; shown to the operator once. */
interface GeneratedTokens {
  hooksToken: string;
  gatewayToken: string;
}

/**
 * Writes a starter config (embedded SQLite, offline echo model, fresh random tokens) to `path`.
 * Fails if the file already exists, so a config is never overwritten.
 */
export function writeDefaultConfig(path: string): GeneratedTokens {
  const tokens = { hooksToken: generateToken(), gatewayToken: generateToken() };
  const text = `// Hookgate configuration (JSON5). Strings may use \${ENV_VAR}.
{
  gateway: {
    bind: "127.0.0.1",
    port: 8787,
    auth: { token: "${tokens.gatewayToken}" },
  },
  hooks: {
    enabled: true,
    token: "${tokens.hooksToken}",
    path: "/hooks",
    allowRequestSessionKey: false,
    allowedSessionKeyPrefixes: ["hook:"],
  },
  agents: {
    // The built-in echo model answers offline; add a provider under models.providers for a real one.
    defaults: { model: "echo/echo" },
    list: [{ id: "main", default: true }],
  },
  store: { driver: "sqlite", path: "state/hookgate.db" },
}
`;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
  return tokens;
}
