import type { Config } from './schema.js';

/** A transform variable whose value is taken for a secret by its name. */
const SECRET_NAME = /key|token|secret|passw|auth|credential/i;

/**
 * Every secret the config holds, for the scrubber: the hook and gateway tokens, provider API keys
 * and credential-bearing headers, channel credentials, mapping verify secrets, and the transform
 * variables named like secrets.
 */
export function listConfigSecrets(config: Config): string[] {
  const out: string[] = [];
  const add = (v: string | readonly string[] | undefined): void => {
    if (v === undefined) return;
    if (typeof v === 'string') out.push(v);
    else out.push(...v);
  };
  add(config.hooks.token);
  add(config.gateway.auth.token);
  add(config.mcp.token);
  for (const p of Object.values(config.models.providers)) {
    add(p.apiKey);
    for (const [name, value] of Object.entries(p.headers ?? {})) {
      if (/authorization|key|token|secret/i.test(name)) add(value.replace(/^(Bearer|Basic)\s+/i, ''));
    }
  }
  const c = config.channels;
  add(c.whatsapp?.accessToken);
  add(c.telegram?.botToken);
  add(c.discord?.botToken);
  add(c.slack?.botToken);
  add(c.mattermost?.token);
  add(c.imessage?.password);
  add(c.msteams?.appPassword);
  // The mail setup writes its own credentials into hooks.gmail; only some keys are typed.
  for (const [name, value] of Object.entries(config.hooks.gmail ?? {})) {
    if (typeof value === 'string' && /token|secret|password|key/i.test(name)) add(value);
  }
  for (const m of config.hooks.mappings) {
    if (m.verify !== undefined && 'secret' in m.verify) add(m.verify.secret);
    for (const [name, value] of Object.entries(m.transform?.env ?? {})) {
      if (SECRET_NAME.test(name)) add(value);
    }
  }
  return out;
}
