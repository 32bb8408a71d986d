import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { safeParseConfig, safeParseConfigText } from './load-config.js';

const path = '/etc/hookgate/hookgate.json';
const env = {};
const valid = { hooks: { enabled: true, token: 'hook-secret' }, gateway: { auth: { token: 'gw-secret' } } };

function issuesOf(raw: unknown, at = path): Array<{ path: string; message: string }> {
  const r = safeParseConfig(raw, { path: at, env });
  return r.ok ? [] : r.issues;
}

function paths(raw: unknown, at = path): string[] {
  return issuesOf(raw, at).map((i) => i.path);
}

describe('safeParseConfig', () => {
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
      retention: { events: '30d', runs: '30d', deliveries: '30d', transcript: '30d', requests: '7d' },
    });
    assert.equal(r.loaded.transformsDir, '/etc/hookgate/hooks/transforms');
  });

  it('normalises a trailing slash off hooks.path', () => {
    const r = safeParseConfig({ hooks: { ...valid.hooks, path: '/in/' } }, { path, env });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.path, '/in');
  });

  const refusals: Array<[string, unknown, string]> = [
    ['hooks.enabled without a token', { hooks: { enabled: true } }, 'hooks.token'],
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
    assert.match(short.loaded.warnings[0]!.message, /11 characters long; use at least 24/);
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
    const pk = `whpk_${Buffer.alloc(32, 7).toString('base64')}`;
    const mappings = [
      { match: { path: 'a' }, verify: { kind: 'github', secret: 'x' } },
      { match: { path: 'b' }, verify: { kind: 'stripe', secret: ['x', 'y'], toleranceSeconds: 600, required: true } },
      { match: { path: 'c' }, verify: { kind: 'slack', secret: 'x' } },
      {
        match: { path: 'd' },
        verify: { kind: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', publicKey: pk },
      },
      {
        match: { path: 'e' },
        verify: { kind: 'hmac', secret: 'x', header: 'x-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'v1=' },
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
          token: 'hook-secret',
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
    const r = parse({ hooks: { enabled: true, token: '${TOKEN}' } }, { TOKEN: '123456' });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.token, '123456');
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
    const r = safeParseConfigText(text, { path, env: { T: 'from-env' } });
    assert.ok(r.ok);
    assert.equal(r.loaded.config.hooks.token, 'from-env');
  });

  it('reports a syntax error', () => {
    const r = safeParseConfigText('{ hooks: ', { path, env });
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.issues[0]!.message, /not valid JSON5/);
  });
});
