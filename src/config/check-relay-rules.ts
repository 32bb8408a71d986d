import type { Issue } from '../common/errors.js';
import { MIN_SECRET_LENGTH } from './check-security-rules.js';
import type { Config } from './schema.js';

/** The relay's pull API: `POST <relay>/relay/lease` and `POST <relay>/relay/ack`. */
const RELAY_PATH = '/relay';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `relay` and `pull`: a relay has a token of its own and runs no agents (hooks on, no MCP, no pull
 * of its own); a home's pull token is none of its own tokens.
 */
export function checkRelayRules(config: Config, hooksBase: string | null): Issue[] {
  const { relay, pull, hooks, gateway, mcp } = config;
  const issues: Issue[] = [];
  const own: Array<[string, string | undefined]> = [
    ['hooks.token', hooks.token],
    ['gateway.auth.token', gateway.auth.token],
    ['mcp.token', mcp.token],
  ];
  const dedicated = (path: string, token: string | undefined, what: string): void => {
    if (token === undefined) return;
    if (token.length < MIN_SECRET_LENGTH)
      issues.push({
        path,
        message: `is ${token.length} characters long; use at least ${MIN_SECRET_LENGTH} random characters (hookgate token generates one)`,
      });
    for (const [name, value] of own) {
      if (value !== undefined && value === token)
        issues.push({ path, message: `must differ from ${name} (${what} is dedicated)` });
    }
  };
  if (relay.enabled && relay.token === undefined)
    issues.push({ path: 'relay.token', message: 'is required when relay.enabled is true' });
  dedicated('relay.token', relay.token, 'the relay token');
  if (relay.enabled) {
    if (!hooks.enabled)
      issues.push({ path: 'relay.enabled', message: 'a relay receives hook requests: set hooks.enabled to true' });
    if (mcp.enabled)
      issues.push({ path: 'mcp.enabled', message: 'a relay runs no agents and publishes nothing: turn mcp off' });
    if (pull !== undefined)
      issues.push({ path: 'pull', message: 'a relay does not pull from another relay: remove pull or relay.enabled' });
    hooks.mappings.forEach((m, i) => {
      if (m.catchUp !== undefined)
        issues.push({
          path: `hooks.mappings[${i}].catchUp`,
          message: 'a relay builds no actions, so it catches nothing up: set catchUp at the home',
        });
    });
    if (hooksBase === RELAY_PATH)
      issues.push({ path: 'hooks.path', message: `must not be "${RELAY_PATH}" on a relay (its pull API lives there)` });
  }
  if (pull !== undefined) {
    dedicated('pull.token', pull.token, 'the pull token');
    const url = new URL(pull.url);
    if (url.username !== '' || url.password !== '')
      issues.push({ path: 'pull.url', message: 'must not carry credentials (the token goes in pull.token)' });
    if (url.search !== '' || url.hash !== '')
      issues.push({ path: 'pull.url', message: "is the relay's base URL: no query or fragment" });
  }
  return issues;
}

/** A pull over plain HTTP to another host sends the relay token and every request in clear. */
export function checkRelayWarnings(config: Config): Issue[] {
  const pull = config.pull;
  if (pull === undefined) return [];
  const url = new URL(pull.url);
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname))
    return [
      {
        path: 'pull.url',
        message: 'is plain http to another host: the relay token and every request travel in clear (use https)',
      },
    ];
  return [];
}
