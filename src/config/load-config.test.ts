import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { safeParseConfig, safeParseConfigText } from './load-config.js';

const path = '/etc/hookgate/hookgate.json';
const env = {};
const valid = {
  hooks: { enabled: true, token: 'hook-secret-0123456' },
  gateway: { auth: { token: 'gw-secret-0123456789' } },
};

function issuesOf(raw: unknown, at = path): Array<{ path: string; message: string }> {
  const r = safeParseConfig(raw, { path: at, env });
  return r.ok ? [] : r.issues;
}

function paths(raw: unknown, at = path): string[] {
  return issuesOf(raw, at).map((i) => i.path);
}

describe('safeParseConfig', () => {
  it('suggests the key an unknown key was most likely meant to be, at its own level', () => {
    const r = safeParseConfig(
      {
        ...valid,
        hooks: { ...valid.hooks, tokn: 'x', mappings: [{ id: 'a', match: { pth: 'a' }, zzzzzz: 1 }] },
        gatway: {},
        models: { providers: { p: { api: 'openai', apikey: 'k' } } },
      },
      { path, env },
    );
    assert.ok(!r.ok);
    const byPath = Object.fromEntries(r.issues.map((i) => [i.path, i.message]));
    assert.equal(byPath['hooks.tokn'], 'unknown key (did you mean "token"?)');
    assert.equal(byPath['hooks.mappings[0].match.pth'], 'unknown key (did you mean "path"?)');
    assert.equal(byPath['hooks.mappings[0].zzzzzz'], 'unknown key', 'nothing near enough to suggest');
    assert.equal(byPath['gatway'], 'unknown key (did you mean "gateway"?)');
    assert.equal(byPath['models.providers.p.apikey'], 'unknown key (did you mean "apiKey"?)');
  });

  it('fills every default', () => {
    const r = safeParseConfig(valid, { path, env });
    assert.ok(r.ok);
    const { config } = r.loaded;
    assert.equal(config.hooks.path, '/hooks');
    assert.equal(config.hooks.maxBodyBytes, 262_144);
    assert.deepEqual(config.hooks.authRateLimit, {
      maxFailures: 20,
      windowSeconds: 60,
      lockoutSeconds: 60,
      maxClients: 10_000,
    });
    assert.equal(config.hooks.allowRequestSessionKey, false);
    assert.equal(config.gateway.bind, '127.0.0.1');
    assert.equal(config.gateway.bodyTimeoutMs, 30_000);
    assert.deepEqual(config.logging, { access: 'all', accessSample: 1 });
    assert.equal(config.agents.defaults.timeoutSeconds, 600);
    assert.deepEqual(config.store, {
      driver: 'sqlite',
      path: '/etc/hookgate/state/hookgate.db',
      sync: 'full',
      leaseSeconds: 30,
      retention: { events: '30d', runs: '30d', deliveries: '30d', transcript: '30d', requests: '7d', eventLog: '7d' },
    });
    assert.deepEqual(config.mcp, {
      enabled: false,
      path: '/mcp',
      allowLoopbackCallbacks: false,
      allowPrivateCallbacks: false,
      maxSubscriptions: 100,
    });
    assert.equal(r.loaded.transformsDir, '/etc/hookgate/hooks/transforms');
  });

  it('normalises a trailing slash off hooks.path', () => {
    const r = safeParseConfig({ hooks: { ...valid.hooks, path: '/in/' } }, { path, env });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.path, '/in');
  });

  const mcp = { enabled: true, token: 'mcp-secret-token-0123' };
  const refusals: Array<[string, unknown, string]> = [
    ['hooks.enabled without a token', { hooks: { enabled: true } }, 'hooks.token'],
    ['mcp.enabled without a token', { ...valid, mcp: { enabled: true } }, 'mcp.token'],
    ['an MCP token equal to the hook token', { ...valid, mcp: { ...mcp, token: 'hook-secret' } }, 'mcp.token'],
    ['an MCP token equal to the gateway token', { ...valid, mcp: { ...mcp, token: 'gw-secret' } }, 'mcp.token'],
    ['mcp.path "/"', { ...valid, mcp: { ...mcp, path: '/' } }, 'mcp.path'],
    ['mcp.path on the admin surface', { ...valid, mcp: { ...mcp, path: '/admin/mcp' } }, 'mcp.path'],
    ['mcp.path under hooks.path', { ...valid, mcp: { ...mcp, path: '/hooks/mcp' } }, 'mcp.path'],
    ['maxSubscriptions of 0', { ...valid, mcp: { ...mcp, maxSubscriptions: 0 } }, 'mcp.maxSubscriptions'],
    [
      'an event mapping while MCP is off',
      { ...valid, hooks: { ...valid.hooks, mappings: [{ match: { path: 'feed' }, action: 'event' }] } },
      'hooks.mappings[0].action',
    ],
    [
      'a hook token equal to the gateway token',
      { hooks: { enabled: true, token: 'x' }, gateway: { auth: { token: 'x' } } },
      'hooks.token',
    ],
    ['hooks.path "/"', { hooks: { ...valid.hooks, path: '/' } }, 'hooks.path'],
    ['hooks.path without a leading slash', { hooks: { ...valid.hooks, path: 'hooks' } }, 'hooks.path'],
    [
      'prefixes lacking hook: with no default key',
      { hooks: { ...valid.hooks, allowedSessionKeyPrefixes: ['ext:'] } },
      'hooks.allowedSessionKeyPrefixes',
    ],
    [
      'a default key outside the prefixes',
      { hooks: { ...valid.hooks, defaultSessionKey: 'x:1', allowedSessionKeyPrefixes: ['hook:'] } },
      'hooks.defaultSessionKey',
    ],
    [
      'transformsDir escaping with ..',
      { hooks: { ...valid.hooks, transformsDir: '../elsewhere' } },
      'hooks.transformsDir',
    ],
    ['transformsDir absolute elsewhere', { hooks: { ...valid.hooks, transformsDir: '/tmp' } }, 'hooks.transformsDir'],
    ['an unknown top-level key', { ...valid, extra: 1 }, 'extra'],
    ['an unknown nested key', { hooks: { ...valid.hooks, tokn: 'x' } }, 'hooks.tokn'],
    ['a mistyped boolean', { hooks: { ...valid.hooks, enabled: 'yes' } }, 'hooks.enabled'],
    ['a mistyped port', { gateway: { port: '80' } }, 'gateway.port'],
    ['an unknown preset', { hooks: { ...valid.hooks, presets: ['outlook'] } }, 'hooks.presets[0]'],
    ['a bad trusted proxy', { gateway: { trustedProxies: ['10.0.0.0/33'] } }, 'gateway.trustedProxies[0]'],
    ['a hook token under 16 characters', { hooks: { enabled: true, token: 'x'.repeat(15) } }, 'hooks.token'],
    [
      'a gateway token under 16 characters',
      { ...valid, gateway: { auth: { token: 'short-token' } } },
      'gateway.auth.token',
    ],
    [
      'a verify secret under 16 characters',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'github', secret: 'hunter2' } }] } },
      'hooks.mappings[0].verify.secret',
    ],
    [
      'a short secret in a rotation list',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'slack', secret: ['x'.repeat(32), 'abc'] } }] } },
      'hooks.mappings[0].verify.secret[1]',
    ],
    [
      'a trusted proxy range of every IPv4 address',
      { gateway: { trustedProxies: ['0.0.0.0/0'] } },
      'gateway.trustedProxies[0]',
    ],
    [
      'a trusted proxy range of every IPv6 address',
      { gateway: { trustedProxies: ['10.0.0.1', '::/0'] } },
      'gateway.trustedProxies[1]',
    ],
    [
      'a trusted proxy range of every IPv4-mapped address',
      { gateway: { trustedProxies: ['::ffff:0:0/96'] } },
      'gateway.trustedProxies[0]',
    ],
    [
      'failure limits of 100,000 a minute',
      { hooks: { ...valid.hooks, authRateLimit: { maxFailures: 100_000 } } },
      'hooks.authRateLimit',
    ],
    [
      'a one-second lockout after 20 failures',
      { hooks: { ...valid.hooks, authRateLimit: { lockoutSeconds: 1 } } },
      'hooks.authRateLimit',
    ],
    [
      'a lockout that forgets all but 10 clients',
      { hooks: { ...valid.hooks, authRateLimit: { maxClients: 10 } } },
      'hooks.authRateLimit.maxClients',
    ],
    [
      'a provider base URL that is not HTTP',
      { models: { providers: { p: { api: 'openai', baseUrl: 'file:///etc/passwd' } } } },
      'models.providers.p.baseUrl',
    ],
    [
      'a channel base URL that is not HTTP',
      { channels: { telegram: { botToken: '1:x', baseUrl: 'ftp://bots.example' } } },
      'channels.telegram.baseUrl',
    ],
    [
      'a Mattermost server that is not HTTP',
      { channels: { mattermost: { token: 'm', baseUrl: 'javascript:alert(1)' } } },
      'channels.mattermost.baseUrl',
    ],
    [
      'a mapping with a bad action',
      { hooks: { ...valid.hooks, mappings: [{ action: 'run' }] } },
      'hooks.mappings[0].action',
    ],
    [
      'two default agents',
      {
        agents: {
          list: [
            { id: 'a', default: true },
            { id: 'b', default: true },
          ],
        },
      },
      'agents.list',
    ],
    ['a duplicate agent id', { agents: { list: [{ id: 'a' }, { id: 'a' }] } }, 'agents.list[1].id'],
    ['a default model of an unknown provider', { agents: { defaults: { model: 'nope/x' } } }, 'agents.defaults.model'],
    [
      'an agent model outside the allow-list',
      { agents: { defaults: { models: { 'echo/a': {} } }, list: [{ id: 'a', model: 'echo/b' }] } },
      'agents.list[0].model',
    ],
    [
      'a mapping literal thinking outside the levels',
      { hooks: { ...valid.hooks, mappings: [{ thinking: 'turbo' }] } },
      'hooks.mappings[0].thinking',
    ],
    [
      'a mapping literal model of an unknown provider',
      { hooks: { ...valid.hooks, mappings: [{ model: 'nope/x' }] } },
      'hooks.mappings[0].model',
    ],
    [
      'a mapping literal session key outside the prefixes',
      { hooks: { ...valid.hooks, allowedSessionKeyPrefixes: ['hook:'], mappings: [{ sessionKey: 'x:1' }] } },
      'hooks.mappings[0].sessionKey',
    ],
    [
      'the gmail preset with prefixes that refuse its keys',
      {
        hooks: { ...valid.hooks, defaultSessionKey: 'ext:1', allowedSessionKeyPrefixes: ['ext:'], presets: ['gmail'] },
      },
      'hooks.presets',
    ],
    [
      'a gmail thinking outside the levels',
      { hooks: { ...valid.hooks, gmail: { thinking: 'turbo' } } },
      'hooks.gmail.thinking',
    ],
    [
      'a mapping routed to a channel that is not configured',
      { hooks: { ...valid.hooks, mappings: [{ channel: 'telegram' }] } },
      'hooks.mappings[0].channel',
    ],
    [
      'a session-key template whose fixed start no prefix allows',
      { hooks: { ...valid.hooks, allowedSessionKeyPrefixes: ['hook:'], mappings: [{ sessionKey: 'gh:{{repo}}' }] } },
      'hooks.mappings[0].sessionKey',
    ],
    [
      'a session-key template longer than a prefix yet outside it',
      {
        hooks: {
          ...valid.hooks,
          allowedSessionKeyPrefixes: ['hook:gh:'],
          mappings: [{ sessionKey: 'hook:gl:{{id}}' }],
        },
      },
      'hooks.mappings[0].sessionKey',
    ],
    [
      'a message template expression that is not a path',
      { hooks: { ...valid.hooks, mappings: [{ messageTemplate: 'Got {{payload.a + 1}}' }] } },
      'hooks.mappings[0].messageTemplate',
    ],
    [
      'a coalesce key expression that is not a path',
      { hooks: { ...valid.hooks, mappings: [{ coalesce: { key: '{{payload.pr number}}', windowSeconds: 60 } }] } },
      'hooks.mappings[0].coalesce.key',
    ],
    [
      'a heartbeat period past what a timer can wait',
      { agents: { defaults: { heartbeat: { every: '30d' } } } },
      'agents.defaults.heartbeat.every',
    ],
    [
      'a flood pause that is not a duration',
      { agents: { defaults: { heartbeat: { floodPause: 'soon' } } } },
      'agents.defaults.heartbeat.floodPause',
    ],
    [
      'a flood pause past what a timer can wait',
      { agents: { defaults: { heartbeat: { floodPause: '25d' } } } },
      'agents.defaults.heartbeat.floodPause',
    ],
    ['a body deadline over an hour', { gateway: { bodyTimeoutMs: 3_600_001 } }, 'gateway.bodyTimeoutMs'],
    [
      'a heartbeat every millisecond (a paid turn each)',
      { agents: { defaults: { heartbeat: { every: '1ms' } } } },
      'agents.defaults.heartbeat.every',
    ],
    [
      'a heartbeat under a minute',
      { agents: { defaults: { heartbeat: { every: '59s' } } } },
      'agents.defaults.heartbeat.every',
    ],
    ['a body deadline under a second', { gateway: { bodyTimeoutMs: 999 } }, 'gateway.bodyTimeoutMs'],
    [
      'a channel call timeout under a second',
      { channels: { telegram: { botToken: '1:x', timeoutMs: 1 } } },
      'channels.telegram.timeoutMs',
    ],
    [
      'a transform time limit under 100 ms',
      { hooks: { ...valid.hooks, mappings: [{ transform: { module: 't.js', timeoutMs: 1 } }] } },
      'hooks.mappings[0].transform.timeoutMs',
    ],
    [
      'a run time limit under a second',
      { agents: { defaults: { timeoutSeconds: 0.001 } } },
      'agents.defaults.timeoutSeconds',
    ],
    [
      "a mapping's run time limit under a second",
      { hooks: { ...valid.hooks, mappings: [{ timeoutSeconds: 0.5 }] } },
      'hooks.mappings[0].timeoutSeconds',
    ],
    [
      'a channel call timeout over ten minutes',
      { channels: { telegram: { botToken: '1:x', timeoutMs: 600_001 } } },
      'channels.telegram.timeoutMs',
    ],
    [
      'a mapping id of a built-in endpoint',
      { hooks: { ...valid.hooks, mappings: [{ id: 'agent', match: { path: 'runs' } }] } },
      'hooks.mappings[0].id',
    ],
    [
      'a mapping id of an enabled preset',
      { hooks: { ...valid.hooks, presets: ['gmail'], mappings: [{ id: 'gmail', match: { path: 'mail' } }] } },
      'hooks.mappings[0].id',
    ],
    [
      'a verify block of an unknown kind',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'gitlab', secret: 'x' } }] } },
      'hooks.mappings[0].verify.kind',
    ],
    [
      'a github verify without a secret',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'github' } }] } },
      'hooks.mappings[0].verify.secret',
    ],
    [
      'an empty secret list',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'slack', secret: [] } }] } },
      'hooks.mappings[0].verify.secret',
    ],
    [
      'an hmac verify without its header',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'hmac', secret: 'x' } }] } },
      'hooks.mappings[0].verify.header',
    ],
    [
      'a standard-webhooks verify with no key',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'standard-webhooks' } }] } },
      'hooks.mappings[0].verify',
    ],
    [
      'a standard-webhooks secret that is not base64',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'standard-webhooks', secret: 'whsec_a b' } }] } },
      'hooks.mappings[0].verify.secret',
    ],
    [
      'a standard-webhooks public key of the wrong size',
      { hooks: { ...valid.hooks, mappings: [{ verify: { kind: 'standard-webhooks', publicKey: 'whpk_AAAA' } }] } },
      'hooks.mappings[0].verify.publicKey',
    ],
    [
      'a duplicate model alias',
      { agents: { defaults: { models: { 'a/x': { alias: 'm' }, 'b/y': { alias: 'm' } } } } },
      'agents.defaults.models.b/y.alias',
    ],
    [
      'an allow-list without the fallback model and no default model',
      { agents: { defaults: { models: { 'echo/a': {} } } } },
      'agents.defaults.model',
    ],
    [
      'an agent without a model under an allow-list that lacks the fallback',
      { agents: { defaults: { models: { 'echo/a': {} } }, list: [{ id: 'a', model: 'echo/a' }, { id: 'b' }] } },
      'agents.defaults.model',
    ],
    [
      'a retention window that is not a duration',
      { store: { driver: 'sqlite', retention: { events: '30 days' } } },
      'store.retention.events',
    ],
    [
      'a retention window of 0',
      { store: { driver: 'sqlite', retention: { transcript: '0' } } },
      'store.retention.transcript',
    ],
    [
      'a retention window over 100 years',
      { store: { driver: 'sqlite', retention: { events: '36501d' } } },
      'store.retention.events',
    ],
    [
      'a retention window of a trillion days',
      { store: { driver: 'postgres', url: 'postgres://db/h', retention: { runs: '1000000000000d' } } },
      'store.retention.runs',
    ],
    [
      'a retention window past a 64-bit integer',
      { store: { driver: 'sqlite', retention: { requests: '99999999999999999999999d' } } },
      'store.retention.requests',
    ],
    ['an access log mode it does not know', { logging: { access: 'some' } }, 'logging.access'],
    ['an access sample of 0', { logging: { accessSample: 0 } }, 'logging.accessSample'],
    ['an access sample over 1', { logging: { accessSample: 2 } }, 'logging.accessSample'],
    [
      'a retention window past what a number holds',
      { store: { driver: 'sqlite', retention: { deliveries: `${'9'.repeat(400)}d` } } },
      'store.retention.deliveries',
    ],
  ];
  for (const [name, raw, where] of refusals) {
    it(`refuses ${name} at ${where}`, () => assert.ok(paths(raw).includes(where), JSON.stringify(issuesOf(raw))));
  }

  it('accepts an MCP endpoint with a token of its own and an event mapping', () => {
    const raw = {
      ...valid,
      mcp: { enabled: true, token: 'mcp-secret-token-0123', path: '/events/mcp' },
      hooks: {
        ...valid.hooks,
        mappings: [{ id: 'feed', match: { path: 'feed' }, action: 'event', publishPayload: true }],
      },
    };
    assert.deepEqual(issuesOf(raw), []);
  });

  it('accepts the shortest intervals it allows, and 0 for a heartbeat that never ticks', () => {
    for (const every of ['1m', '60s', 0]) {
      assert.deepEqual(issuesOf({ ...valid, agents: { defaults: { heartbeat: { every } } } }), [], String(every));
    }
    assert.deepEqual(issuesOf({ ...valid, gateway: { bodyTimeoutMs: 1000 } }), []);
    assert.deepEqual(issuesOf({ ...valid, agents: { defaults: { timeoutSeconds: 1 } } }), []);
  });

  it('accepts 16-character tokens, proxy ranges short of everything, limits of 10 tries a second and HTTPS URLs', () => {
    const ok = {
      hooks: {
        enabled: true,
        token: 'x'.repeat(16),
        authRateLimit: { maxFailures: 600, windowSeconds: 600, lockoutSeconds: 60 },
      },
      gateway: { auth: { token: 'y'.repeat(16) }, trustedProxies: ['0.0.0.0/1', '10.0.0.0/8', '::1', 'fd00::/8'] },
      channels: { telegram: { botToken: '1:x', baseUrl: 'https://api.telegram.org' } },
    };
    assert.deepEqual(issuesOf(ok), []);
  });

  it('accepts retention windows of up to 100 years, and says so of a longer one', () => {
    const store = (events: string) => ({ ...valid, store: { driver: 'sqlite', retention: { events } } });
    assert.deepEqual(issuesOf(store('36500d')), []);
    assert.deepEqual(issuesOf(store('876000h')), []);
    assert.deepEqual(issuesOf(store('36500d1ms')), [
      { path: 'store.retention.events', message: 'a duration of at most 100 years ("36500d")' },
    ]);
  });

  it('warns about a hook token shorter than 24 characters, and only then', () => {
    const short = safeParseConfig(valid, { path, env });
    assert.ok(short.ok);
    assert.deepEqual(
      short.loaded.warnings.map((w) => w.path),
      ['hooks.token'],
    );
    assert.match(short.loaded.warnings[0]!.message, /19 characters long; use at least 24/);
    const long = safeParseConfig({ ...valid, hooks: { enabled: true, token: 'x'.repeat(24) } }, { path, env });
    assert.ok(long.ok);
    assert.deepEqual(long.loaded.warnings, []);
  });

  it('warns about a budget on a mapping that makes wakes, not runs', () => {
    const hooks = { enabled: true, token: 'x'.repeat(24) };
    const r = safeParseConfig(
      {
        ...valid,
        hooks: {
          ...hooks,
          mappings: [
            { match: { path: 'w' }, action: 'wake', budget: { runsPerHour: 1 } },
            { match: { path: 'a' }, action: 'agent', budget: { runsPerHour: 1 } },
            // No action: it makes agent runs, the default.
            { match: { path: 'd' }, budget: { runsPerHour: 1 } },
          ],
        },
      },
      { path, env },
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.loaded.warnings.map((w) => w.path),
      ['hooks.mappings[0].budget'],
    );
  });

  it('warns about keys of agent runs on a mapping that makes wakes, unless a transform may switch it', () => {
    const hooks = { enabled: true, token: 'x'.repeat(24) };
    const r = safeParseConfig(
      {
        ...valid,
        hooks: {
          ...hooks,
          mappings: [
            { match: { path: 'w' }, action: 'wake', agentId: 'ops', textTemplate: '{{payload.t}}', wakeMode: 'now' },
            { match: { path: 'a' }, agentId: 'ops', deliver: false },
          ],
        },
      },
      { path, env },
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.loaded.warnings.map((w) => w.path),
      ['hooks.mappings[0].agentId'],
    );
  });

  it('accepts every verify kind with its documented keys', () => {
    const SECRET = 'verify-secret-0123456789';
    const pk = `whpk_${Buffer.alloc(32, 7).toString('base64')}`;
    const mappings = [
      { match: { path: 'a' }, verify: { kind: 'github', secret: SECRET } },
      {
        match: { path: 'b' },
        verify: { kind: 'stripe', secret: [SECRET, `${SECRET}-next`], toleranceSeconds: 600, required: true },
      },
      { match: { path: 'c' }, verify: { kind: 'slack', secret: SECRET } },
      {
        match: { path: 'd' },
        verify: { kind: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', publicKey: pk },
      },
      {
        match: { path: 'e' },
        verify: {
          kind: 'hmac',
          secret: SECRET,
          header: 'x-sig',
          algorithm: 'sha512',
          encoding: 'base64',
          prefix: 'v1=',
        },
      },
    ];
    assert.deepEqual(issuesOf({ hooks: { ...valid.hooks, mappings } }), []);
  });

  it('leaves templated mapping values to be checked per call', () => {
    assert.deepEqual(
      paths({
        hooks: {
          ...valid.hooks,
          allowedSessionKeyPrefixes: ['hook:'],
          mappings: [{ thinking: '{{t}}', model: '{{m}}', sessionKey: '{{k}}' }],
        },
      }),
      [],
    );
  });

  it('accepts a session-key template that can render into a prefix', () => {
    const prefixes = ['hook:', 'gh:pr:'];
    for (const sessionKey of ['hook:{{id}}', 'gh:{{kind}}:{{n}}', 'gh:pr:{{n}}', '{{key}}']) {
      assert.deepEqual(
        paths({ hooks: { ...valid.hooks, allowedSessionKeyPrefixes: prefixes, mappings: [{ sessionKey }] } }),
        [],
        sessionKey,
      );
    }
  });

  it('accepts an unconfigured channel on a mapping that does not deliver, and "last"', () => {
    assert.deepEqual(
      paths({ hooks: { ...valid.hooks, mappings: [{ channel: 'telegram', deliver: false }, { channel: 'last' }] } }),
      [],
    );
  });

  it('accepts a mapping channel that is configured', () => {
    assert.deepEqual(
      paths({
        hooks: { ...valid.hooks, mappings: [{ channel: 'telegram' }] },
        channels: { telegram: { botToken: '123:abc' } },
      }),
      [],
    );
  });

  it('accepts an allow-list without the fallback model when every agent names one, or when it lists the fallback', () => {
    assert.deepEqual(
      paths({ agents: { defaults: { models: { 'echo/a': {} } }, list: [{ id: 'a', model: 'echo/a' }] } }),
      [],
    );
    assert.deepEqual(paths({ agents: { defaults: { models: { 'echo/echo': {}, 'echo/a': {} } } } }), []);
  });

  it('accepts an agent model given by alias', () => {
    assert.deepEqual(paths({ agents: { defaults: { model: 'fast', models: { 'echo/a': { alias: 'fast' } } } } }), []);
  });

  it('accepts prefixes that cover generated keys, and a matching default key', () => {
    assert.deepEqual(paths({ hooks: { ...valid.hooks, allowedSessionKeyPrefixes: ['hook:'] } }), []);
    assert.deepEqual(
      paths({ hooks: { ...valid.hooks, allowedSessionKeyPrefixes: ['ext:'], defaultSessionKey: 'ext:main' } }),
      [],
    );
  });

  it('takes host names, "*." entries and "*" in delivery.allowedLinkHosts, and refuses a URL there', () => {
    const hosts = (allowedLinkHosts: string[]) => paths({ ...valid, delivery: { allowedLinkHosts } });
    assert.deepEqual(hosts(['github.com', '*.example.org', 'bücher.example', '*']), []);
    assert.deepEqual(hosts(['https://github.com', 'a b', '*github.com', 'host:8080']), [
      'delivery.allowedLinkHosts[0]',
      'delivery.allowedLinkHosts[1]',
      'delivery.allowedLinkHosts[2]',
      'delivery.allowedLinkHosts[3]',
    ]);
  });

  it('reports every issue at once', () => {
    const found = paths({ hooks: { enabled: 'yes', path: 3, bogus: true }, gateway: { port: -1 } });
    for (const p of ['hooks.enabled', 'hooks.path', 'hooks.bogus', 'gateway.port']) assert.ok(found.includes(p), p);
  });

  it('refuses a transformsDir symlink that points outside the root', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-cfg-'));
    try {
      mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
      symlinkSync(tmpdir(), join(dir, 'hooks', 'transforms', 'out'));
      mkdirSync(join(dir, 'hooks', 'transforms', 'in'));
      const at = join(dir, 'hookgate.json');
      assert.deepEqual(paths({ hooks: { ...valid.hooks, transformsDir: 'out' } }, at), ['hooks.transformsDir']);
      assert.deepEqual(paths({ hooks: { ...valid.hooks, transformsDir: 'in' } }, at), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('safeParseConfig: values from the environment', () => {
  const parse = (raw: unknown, e: Record<string, string>) => safeParseConfig(raw, { path, env: e });

  it('coerces "${PORT}" to a number where the schema wants one', () => {
    const r = parse({ ...valid, gateway: { port: '${PORT}' } }, { PORT: '9100' });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.loaded.config.gateway.port, 9100);
  });

  it('coerces booleans and nested numbers (hooks.enabled, authRateLimit, mapping deliver)', () => {
    const r = parse(
      {
        gateway: valid.gateway,
        hooks: {
          token: 'hook-secret-0123456',
          enabled: '${ON}',
          authRateLimit: { maxFailures: '${MAX}' },
          mappings: [{ deliver: '${DELIVER}' }],
        },
      },
      { ON: 'true', MAX: '5', DELIVER: 'false' },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.loaded.config.hooks.enabled, true);
    assert.equal(r.loaded.config.hooks.authRateLimit.maxFailures, 5);
    assert.equal(r.loaded.config.hooks.mappings[0]!.deliver, false);
  });

  it('keeps a value of digits a string where the schema wants a string (a token)', () => {
    const r = parse({ hooks: { enabled: true, token: '${TOKEN}' } }, { TOKEN: '1234567890123456' });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.token, '1234567890123456');
  });

  it('still refuses a literal "80" written in the file (only environment values are coerced)', () => {
    assert.deepEqual(
      issuesOf({ gateway: { port: '80' } }).map((i) => i.path),
      ['gateway.port'],
    );
  });

  it('refuses an environment value that is not a number, at its path', () => {
    const r = parse({ gateway: { port: '${PORT}' } }, { PORT: 'eighty' });
    assert.equal(r.ok, false);
    if (!r.ok)
      assert.deepEqual(
        r.issues.map((i) => i.path),
        ['gateway.port'],
      );
  });

  it('takes the port from HOOKGATE_PORT over gateway.port', () => {
    const r = parse({ ...valid, gateway: { port: 8000 } }, { HOOKGATE_PORT: '9200' });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.gateway.port, 9200);
  });

  it('refuses a HOOKGATE_PORT that is not a port', () => {
    const r = parse(valid, { HOOKGATE_PORT: '70000' });
    assert.equal(r.ok, false);
    if (!r.ok)
      assert.deepEqual(
        r.issues.map((i) => i.path),
        ['HOOKGATE_PORT'],
      );
  });
});

describe('safeParseConfig: an OpenClaw hooks section', () => {
  it('warns about hooks.internal instead of refusing it, and drops it', () => {
    const token = 'a-hook-token-long-enough-for-no-warning';
    const r = safeParseConfig(
      {
        hooks: { ...valid.hooks, token, internal: { enabled: true, entries: { 'session-memory': { enabled: true } } } },
      },
      { path, env },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(
      r.loaded.warnings.map((w) => w.path),
      ['hooks.internal'],
    );
    assert.equal(Object.hasOwn(r.loaded.config.hooks, 'internal'), false);
  });

  it('still refuses any other unknown hooks key', () => {
    assert.deepEqual(paths({ hooks: { ...valid.hooks, internal: {}, tokn: 'x' } }), ['hooks.tokn']);
  });
});

describe('safeParseConfigText', () => {
  it('reads JSON5 with comments and substitutes ${ENV}', () => {
    const text = '// c\n{ hooks: { enabled: true, token: "${T}", }, }';
    const r = safeParseConfigText(text, { path, env: { T: 'from-env-0123456789' } });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.token, 'from-env-0123456789');
  });

  it('reports a syntax error', () => {
    const r = safeParseConfigText('{ hooks: ', { path, env });
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.issues[0]!.message, /not valid JSON5/);
  });
});

describe('safeParseConfig: catchUp', () => {
  const github = {
    id: 'gh',
    match: { path: 'github' },
    verify: { kind: 'github', secret: 'github-secret-0123456789' },
    catchUp: { provider: 'github', repo: 'octo/hello', hookId: 42, tokenEnv: 'GH_TOKEN' },
  };
  const withMapping = (m: Record<string, unknown>) => ({ ...valid, hooks: { ...valid.hooks, mappings: [m] } });

  it('reads the token from the variable tokenEnv names, never from the config', () => {
    const r = safeParseConfig(withMapping(github), { path, env: { GH_TOKEN: 'ghp_x' } });
    assert.ok(r.ok);
    assert.equal(r.loaded.catchUpTokens.get('gh'), 'ghp_x');
    assert.doesNotMatch(JSON.stringify(r.loaded.config), /ghp_x/);
    assert.deepEqual(r.loaded.config.hooks.mappings[0]?.catchUp, {
      provider: 'github',
      repo: 'octo/hello',
      hookId: 42,
      tokenEnv: 'GH_TOKEN',
      redeliver: false,
      every: '10m',
      maxEvents: 10_000,
    });
  });

  it('warns of a tokenEnv that is unset, and leaves that mapping without a token', () => {
    const r = safeParseConfig(withMapping(github), { path, env: {} });
    assert.ok(r.ok);
    assert.equal(r.loaded.catchUpTokens.size, 0);
    const warning = r.loaded.warnings.find((w) => w.path === 'hooks.mappings[0].catchUp.tokenEnv');
    assert.match(warning?.message ?? '', /GH_TOKEN is not set: this mapping does not catch up until it is/);
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['without match.path', { ...github, match: undefined }, 'hooks.mappings[0].catchUp'],
    [
      'without a verify of its provider',
      { ...github, verify: { kind: 'stripe', secret: 'whsec_x' } },
      'hooks.mappings[0].catchUp',
    ],
    [
      'naming both a repo and an org',
      { ...github, catchUp: { ...github.catchUp, org: 'octo' } },
      'hooks.mappings[0].catchUp',
    ],
    [
      'with an every that is no duration',
      { ...github, catchUp: { ...github.catchUp, every: 'hourly' } },
      'hooks.mappings[0].catchUp.every',
    ],
    [
      'with a tokenEnv that is no variable name',
      { ...github, catchUp: { ...github.catchUp, tokenEnv: 'ghp_abc-123' } },
      'hooks.mappings[0].catchUp.tokenEnv',
    ],
    [
      'for Stripe with more than 20 types',
      {
        ...github,
        verify: { kind: 'stripe', secret: 'whsec_x' },
        catchUp: { provider: 'stripe', tokenEnv: 'K', types: Array.from({ length: 21 }, (_, i) => `t.${i}`) },
      },
      'hooks.mappings[0].catchUp.types',
    ],
  ];
  for (const [name, mapping, where] of refusals) {
    it(`refuses a catchUp ${name}`, () =>
      assert.ok(paths(withMapping(mapping)).includes(where), JSON.stringify(issuesOf(withMapping(mapping)))));
  }
});
