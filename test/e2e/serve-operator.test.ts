/**
 * `check` refuses what `serve` refuses (bind, channels, session-key templates, transforms);
 * `serve` takes --port, --bind and HOOKGATE_PORT, refuses a named config that is missing, accepts
 * an OpenClaw hooks section, and reloads on SIGHUP and on a saved file, keeping the old config
 * when the new one fails the checks.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  freePort,
  runHookgate,
  spawnGateway,
  type CliResult,
  type GatewayProcess,
} from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, createTempDir, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function configDir(config: ConfigDoc, files: Record<string, string> = {}): { dir: string; path: string } {
  const dir = createTempDir('hookgate-serve-op-');
  dirs.push(dir);
  mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  const path = join(dir, 'hookgate.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return { dir, path };
}

/** Replaces the file the way editors save: a new file renamed over the old one. */
function saveConfig(path: string, config: ConfigDoc): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(config, null, 2));
  renameSync(`${path}.tmp`, path);
}

function out(r: CliResult): string {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
}

async function assertBothRefuse(
  config: ConfigDoc,
  files: Record<string, string>,
  path: string,
  message: RegExp,
): Promise<void> {
  const c = configDir(config, files);
  const env = { HOOKGATE_HOME: c.dir };
  for (const command of ['check', 'serve']) {
    const r = await runHookgate([command, '--config', c.path], { env, timeoutMs: 15_000 });
    assert.equal(r.code, 1, `${command}: ${out(r)}`);
    assert.ok(r.stderr.includes(`${path}: `), `${command} names ${path}: ${out(r)}`);
    assert.match(r.stderr, message, command);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'an operator message, not a stack trace');
  }
}

/** Polls `probe` until it returns true (the gateway acts on a signal or a file on its own time). */
async function eventually(probe: () => Promise<boolean>, what: string, gw: GatewayProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what} did not happen\nstderr:\n${gw.output().stderr}`);
}

describe('check and serve refuse alike', () => {
  it('refuses gateway.bind "loopback", which is not an address', async () => {
    await assertBothRefuse(
      baseConfig({ gateway: { bind: 'loopback', port: await freePort() } }),
      {},
      'gateway.bind',
      /"loopback" is not an IP address/,
    );
  });

  it('refuses a mapping routed to a channel that is not configured', async () => {
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: [{ match: { path: 'ci' }, channel: 'slack', messageTemplate: 'x' }],
    };
    await assertBothRefuse(
      baseConfig({ hooks, gateway: { port: await freePort() } }),
      {},
      'hooks.mappings[0].channel',
      /channel slack is not configured/,
    );
  });

  it('refuses a session-key template no rendering of which fits the prefixes', async () => {
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      allowedSessionKeyPrefixes: ['hook:'],
      mappings: [{ match: { path: 'ci' }, sessionKey: 'ci:{{run}}' }],
    };
    await assertBothRefuse(
      baseConfig({ hooks, gateway: { port: await freePort() } }),
      {},
      'hooks.mappings[0].sessionKey',
      /can never start with/,
    );
  });

  it('refuses a transform that exports no function', async () => {
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: [{ match: { path: 'ci' }, transform: { module: 'data.mjs' } }],
    };
    await assertBothRefuse(
      baseConfig({ hooks, gateway: { port: await freePort() } }),
      { 'hooks/transforms/data.mjs': 'export const settings = { on: true };' },
      'hooks.mappings[0].transform.module',
      /exports neither a default function nor a function named "transform"/,
    );
  });

  it('refuses a transform that does not load', async () => {
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: [{ match: { path: 'ci' }, transform: { module: 'broken.mjs' } }],
    };
    await assertBothRefuse(
      baseConfig({ hooks, gateway: { port: await freePort() } }),
      { 'hooks/transforms/broken.mjs': 'export default (ctx => ;' },
      'hooks.mappings[0].transform.module',
      /failed to load/,
    );
  });

  it('refuses a configured export that is not a function, at transform.export', async () => {
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: [{ match: { path: 'ci' }, transform: { module: 't.mjs', export: 'toAction' } }],
    };
    await assertBothRefuse(
      baseConfig({ hooks, gateway: { port: await freePort() } }),
      { 'hooks/transforms/t.mjs': 'export default () => null;' },
      'hooks.mappings[0].transform.export',
      /export "toAction" is not a function \(its functions: default\)/,
    );
  });
});

describe('serve: where the config and the port come from', () => {
  it('refuses a --config that does not exist, and writes nothing', async () => {
    const dir = createTempDir('hookgate-serve-op-');
    dirs.push(dir);
    const typo = join(dir, 'hookgate.jsno');
    const r = await runHookgate(['serve', '--config', typo], { env: { HOOKGATE_HOME: dir } });
    assert.equal(r.code, 1, out(r));
    assert.match(r.stderr, /no config file at .*hookgate\.jsno/);
    assert.equal(existsSync(typo), false, 'no config written at the typo');
    assert.equal(existsSync(join(dir, 'hookgate.json')), false, 'no first-run config either');
    assert.doesNotMatch(r.stdout, /token/);
  });

  it('refuses a HOOKGATE_CONFIG that does not exist', async () => {
    const dir = createTempDir('hookgate-serve-op-');
    dirs.push(dir);
    const r = await runHookgate(['serve'], { env: { HOOKGATE_HOME: dir, HOOKGATE_CONFIG: join(dir, 'nope.json') } });
    assert.equal(r.code, 1, out(r));
    assert.equal(existsSync(join(dir, 'nope.json')), false);
  });

  it('listens on --port and --bind over the config', async () => {
    const c = configDir(baseConfig({ gateway: { bind: '0.0.0.0', port: 1 } }));
    const port = await freePort();
    const gw = await spawnGateway(['--config', c.path, '--port', String(port), '--bind', '127.0.0.1'], port, {
      env: { HOOKGATE_HOME: c.dir },
    });
    try {
      assert.equal((await post(port, '/hooks/wake', { text: 'flags' }, { auth: HOOK_TOKEN })).status, 200);
    } finally {
      await gw.stop();
    }
  });

  it('listens on HOOKGATE_PORT, and on "${PORT}" from the environment', async () => {
    const port = await freePort();
    const c = configDir(baseConfig({ gateway: { port: '${PORT}' } }));
    const gw = await spawnGateway(['--config', c.path], port, { env: { HOOKGATE_HOME: c.dir, PORT: String(port) } });
    await gw.stop();
    const other = await freePort();
    const gw2 = await spawnGateway(['--config', c.path], other, {
      env: { HOOKGATE_HOME: c.dir, PORT: String(port), HOOKGATE_PORT: String(other) },
    });
    await gw2.stop();
  });

  it('refuses --port that is not a port with exit 2', async () => {
    const c = configDir(baseConfig());
    const r = await runHookgate(['serve', '--config', c.path, '--port', 'http']);
    assert.equal(r.code, 2, out(r));
    assert.match(r.stderr, /--port must be a port number/);
  });
});

describe('serve: an OpenClaw hooks section', () => {
  it('starts with hooks.internal present, warning about it, and runs a named transform export', async () => {
    const port = await freePort();
    const hooks = {
      enabled: true,
      token: HOOK_TOKEN,
      path: '/hooks',
      presets: ['gmail'],
      transformsDir: 'openclaw',
      mappings: [
        { id: 'ha', match: { path: 'home' }, action: 'wake', wakeMode: 'now', transform: { module: 'home.mjs' } },
      ],
      gmail: {
        account: 'ops@example.com',
        topic: 'projects/p/topics/gog-gmail-watch',
        label: 'INBOX',
        includeBody: true,
      },
      internal: { enabled: true, entries: { 'session-memory': { enabled: true } } },
    };
    const c = configDir(baseConfig({ hooks, gateway: { port, logLevel: 'warn' } }), {
      'hooks/transforms/openclaw/home.mjs':
        'export async function transform(ctx) { return { kind: "wake", text: "door " + ctx.url.searchParams.get("state") }; }',
    });
    const check = await runHookgate(['check', '--config', c.path], { env: { HOOKGATE_HOME: c.dir } });
    assert.equal(check.code, 0, out(check));
    assert.match(check.stderr, /warning: hooks\.internal: /);
    const gw = await spawnGateway(['--config', c.path], port, { env: { HOOKGATE_HOME: c.dir } });
    try {
      const r = await post(
        port,
        '/hooks/home?state=open',
        { entity: 'binary_sensor.front_door' },
        { auth: HOOK_TOKEN },
      );
      assert.equal(r.status, 200, r.text);
      const events = await runHookgate(['events', '--json', '--config', c.path], { env: { HOOKGATE_HOME: c.dir } });
      assert.match(events.stdout, /door open/);
    } finally {
      await gw.stop();
    }
  });
});

describe('serve: config reload', () => {
  it('applies a new token on SIGHUP and on a saved file; refuses a config that fails check, keeping the old one', async () => {
    const port = await freePort();
    const config = (token: string, extra: Record<string, unknown> = {}): ConfigDoc =>
      baseConfig({ hooks: { enabled: true, token, ...extra }, gateway: { port, logLevel: 'warn' } });
    const c = configDir(config('first-token-1a2b'));
    const gw = await spawnGateway(['--config', c.path], port, { env: { HOOKGATE_HOME: c.dir } });
    const status = async (token: string): Promise<number> =>
      (await post(port, '/hooks/wake', { text: 'reload' }, { auth: token })).status;
    try {
      assert.equal(await status('first-token-1a2b'), 200);

      saveConfig(c.path, config('second-token-3c4d'));
      gw.child.kill('SIGHUP');
      await eventually(async () => (await status('second-token-3c4d')) === 200, 'the second token working', gw);
      assert.equal(await status('first-token-1a2b'), 401, 'the old token is gone');

      saveConfig(c.path, config('third-token-5e6f', { mappings: [{ match: { path: 'x' }, channel: 'discord' }] }));
      gw.child.kill('SIGHUP');
      await eventually(
        async () => gw.output().stderr.includes('config reload refused'),
        'the refusal being logged',
        gw,
      );
      assert.match(gw.output().stderr, /hooks\.mappings\[0\]\.channel/);
      assert.equal(await status('second-token-3c4d'), 200, 'the running config stays');
      assert.equal(await status('third-token-5e6f'), 401);

      // No signal: saving the file is enough.
      saveConfig(
        c.path,
        config('fourth-token-7a8b', {
          mappings: [{ match: { path: 'ci' }, action: 'wake', textTemplate: 'ci {{status}}' }],
        }),
      );
      await eventually(async () => (await status('fourth-token-7a8b')) === 200, 'the saved file being applied', gw);
      const mapped = await post(port, '/hooks/ci', { status: 'green' }, { auth: 'fourth-token-7a8b' });
      assert.equal(mapped.status, 200, 'a mapping added by the reload answers');

      saveConfig(c.path, config('fifth-token-9c0d', { authRateLimit: { maxFailures: 3 } }));
      await eventually(
        async () => gw.output().stderr.includes('take effect only after a restart'),
        'the restart notice',
        gw,
      );
      assert.match(gw.output().stderr, /hooks\.authRateLimit/);
    } finally {
      await gw.stop();
    }
  });
});
