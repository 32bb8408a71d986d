import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { safeParseConfig } from './load-config.js';

const path = '/etc/hookgate/hookgate.json';
const env = {};
const hooks = { enabled: true, token: 'hook-secret-long-enough-for-no-warning' };
const gateway = { auth: { token: 'gw-secret-0123456789' } };
const relay = { enabled: true, token: 'relay-secret-0123456789' };
const pull = { url: 'https://relay.example.com', token: 'relay-secret-0123456789' };

function parse(raw: unknown) {
  return safeParseConfig(raw, { path, env });
}

function issuePaths(raw: unknown): string[] {
  const r = parse(raw);
  return r.ok ? [] : r.issues.map((i) => i.path);
}

describe('relay and pull config', () => {
  it('fills the relay defaults and leaves pull unset', () => {
    const r = parse({ hooks, gateway, relay });
    assert.ok(r.ok);
    assert.deepEqual(r.loaded.config.relay, {
      enabled: true,
      token: 'relay-secret-0123456789',
      leaseSeconds: 60,
      maxBatch: 100,
      maxBatchBytes: 4 * 1024 * 1024,
      maxWaitSeconds: 30,
      maxLeases: 20,
      retention: '7d',
    });
    assert.equal(r.loaded.config.pull, undefined);
  });

  it('fills the pull defaults of a home gateway', () => {
    const r = parse({ hooks, gateway, pull });
    assert.ok(r.ok);
    assert.deepEqual(r.loaded.config.pull, {
      ...pull,
      waitSeconds: 25,
      batchSize: 100,
      concurrency: 32,
      connectTimeoutSeconds: 10,
      retryMaxSeconds: 60,
    });
  });

  const refusals: Array<[string, unknown, string]> = [
    ['a relay without a token', { hooks, gateway, relay: { enabled: true } }, 'relay.token'],
    [
      'a relay token equal to the hook token',
      { hooks, gateway, relay: { ...relay, token: hooks.token } },
      'relay.token',
    ],
    [
      'a relay token equal to the gateway token',
      { hooks, gateway, relay: { ...relay, token: 'gw-secret-0123456789' } },
      'relay.token',
    ],
    [
      'a relay token equal to the MCP token',
      { hooks, gateway, mcp: { token: 'relay-secret-0123456789' }, relay },
      'relay.token',
    ],
    ['a relay with hooks off', { hooks: { ...hooks, enabled: false }, gateway, relay }, 'relay.enabled'],
    [
      'a relay that runs MCP',
      { hooks, gateway, relay, mcp: { enabled: true, token: 'mcp-secret-0123456789' } },
      'mcp.enabled',
    ],
    ['a relay that pulls too', { hooks, gateway, relay, pull: { ...pull, token: 'other-token-0123456789' } }, 'pull'],
    [
      'a relay mapping that catches up',
      {
        hooks: {
          ...hooks,
          mappings: [
            {
              match: { path: 'github' },
              verify: { kind: 'github', secret: 's' },
              catchUp: { provider: 'github', repo: 'o/r', hookId: 1, tokenEnv: 'GH_TOKEN' },
            },
          ],
        },
        gateway,
        relay,
      },
      'hooks.mappings[0].catchUp',
    ],
    ['a relay whose hooks live at /relay', { hooks: { ...hooks, path: '/relay' }, gateway, relay }, 'hooks.path'],
    ['a pull token equal to the hook token', { hooks, gateway, pull: { ...pull, token: hooks.token } }, 'pull.token'],
    [
      'a pull token equal to the gateway token',
      { hooks, gateway, pull: { ...pull, token: 'gw-secret-0123456789' } },
      'pull.token',
    ],
    [
      'a pull URL that is not http(s)',
      { hooks, gateway, pull: { ...pull, url: 'ftp://relay.example.com' } },
      'pull.url',
    ],
    [
      'a pull URL with credentials',
      { hooks, gateway, pull: { ...pull, url: 'https://u:p@relay.example.com' } },
      'pull.url',
    ],
    [
      'a pull URL with a query',
      { hooks, gateway, pull: { ...pull, url: 'https://relay.example.com/?a=1' } },
      'pull.url',
    ],
    ['a short relay token', { hooks, gateway, relay: { ...relay, token: 'short' } }, 'relay.token'],
    ['a short pull token', { hooks, gateway, pull: { ...pull, token: 'short' } }, 'pull.token'],
    ['a relay lease of 0 s', { hooks, gateway, relay: { ...relay, leaseSeconds: 0 } }, 'relay.leaseSeconds'],
    [
      'a relay retention that is no duration',
      { hooks, gateway, relay: { ...relay, retention: 'soon' } },
      'relay.retention',
    ],
  ];
  for (const [name, raw, at] of refusals) {
    it(`refuses ${name}`, () => {
      assert.ok(issuePaths(raw).includes(at), `expected an issue at ${at}: ${JSON.stringify(issuePaths(raw))}`);
    });
  }

  it('warns about a pull over plain http to another host, not to loopback', () => {
    const warned = parse({ hooks, gateway, pull: { ...pull, url: 'http://relay.example.com' } });
    assert.ok(warned.ok);
    assert.deepEqual(
      warned.loaded.warnings.map((w) => w.path),
      ['pull.url'],
    );
    const local = parse({ hooks, gateway, pull: { ...pull, url: 'http://127.0.0.1:8787' } });
    assert.ok(local.ok);
    assert.deepEqual(local.loaded.warnings, []);
  });
});
