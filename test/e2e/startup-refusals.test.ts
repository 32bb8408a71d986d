/**
 * Startup refusals: `hookgate check` and `hookgate serve` exit non-zero on a bad config and name
 * the offending dot-path on stderr. Plus the happy paths: a valid config, `${ENV}` substitution,
 * and the first run that writes a config and prints a working curl line.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort, isPortFree, runHookgate, spawnGateway, type CliResult } from '../helpers/gateway-process.js';
import { post, send } from '../helpers/http-client.js';
import {
  baseConfig,
  createTempConfig,
  createTempDir,
  GATEWAY_TOKEN,
  HOOK_TOKEN,
  type ConfigDoc,
  type TempConfig,
} from '../helpers/temp-config.js';

const temps: Array<{ cleanup(): void }> = [];
after(() => {
  for (const t of temps) t.cleanup();
});

function track<T extends { cleanup(): void }>(t: T): T {
  temps.push(t);
  return t;
}

function tempDir(): string {
  const dir = createTempDir();
  track({ cleanup: () => rmSync(dir, { recursive: true, force: true }) });
  return dir;
}

/** Asserts the run refused to start: exit code not 0, not killed by our timeout, path on stderr. */
function assertRefused(result: CliResult, ...needles: Array<string | RegExp>): void {
  const context = `exit ${result.code} signal ${result.signal}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  assert.equal(result.timedOut, false, `the command must exit by itself, not keep running: ${context}`);
  assert.notEqual(result.code, 0, context);
  assert.notEqual(result.code, null, context);
  for (const needle of needles) {
    if (typeof needle === 'string') assert.ok(result.stderr.includes(needle), `stderr names "${needle}": ${context}`);
    else assert.match(result.stderr, needle, context);
  }
}

/**
 * Runs both `check` and `serve` on the config and asserts each refuses, naming every needle. The
 * config listens on a free port, so a wrongly accepted config shows up as a timeout, not a clash.
 */
async function assertBothRefuse(temp: TempConfig, ...needles: Array<string | RegExp>): Promise<void> {
  const env = { HOOKGATE_HOME: temp.dir };
  const check = await runHookgate(['check', '--config', temp.path], { env });
  assertRefused(check, ...needles);
  const serve = await runHookgate(['serve', '--config', temp.path], { env, timeoutMs: 15_000 });
  assertRefused(serve, ...needles);
}

/** A config document with the given sections merged in, listening on a free port. */
async function configWith(overrides: { [section: string]: unknown }): Promise<ConfigDoc> {
  const doc = baseConfig(overrides);
  doc['gateway'] = { ...(doc['gateway'] as object), port: await freePort() };
  return doc;
}

/** Exact-path matcher: the path followed by a colon, as `formatIssues` prints it. */
const at = (path: string): RegExp => new RegExp(`(^|\\s)${path.replace(/[.[\]]/g, (c) => `\\${c}`)}:`, 'm');

describe('startup refusals (check and serve exit non-zero, naming the dot-path)', () => {
  it('refuses hooks.enabled without hooks.token', async () => {
    const doc = await configWith({});
    doc['hooks'] = { enabled: true };
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.token'));
  });

  it('refuses hooks.token equal to gateway.auth.token', async () => {
    const doc = await configWith({ hooks: { enabled: true, token: GATEWAY_TOKEN } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.token'));
  });

  it('refuses hooks.path "/"', async () => {
    const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, path: '/' } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.path'));
  });

  it('refuses allowedSessionKeyPrefixes lacking "hook:" while defaultSessionKey is unset', async () => {
    const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, allowedSessionKeyPrefixes: ['ops:'] } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.allowedSessionKeyPrefixes'));
  });

  it('refuses a defaultSessionKey that matches none of allowedSessionKeyPrefixes', async () => {
    const doc = await configWith({
      hooks: { enabled: true, token: HOOK_TOKEN, allowedSessionKeyPrefixes: ['hook:'], defaultSessionKey: 'main' },
    });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.defaultSessionKey'));
  });

  it('refuses a mapping where an unverified sender, unwrapped content and a payload-chosen recipient meet', async () => {
    const risky = { id: 'relay', match: { path: 'relay' }, allowUnsafeExternalContent: true, to: '{{payload.to}}' };
    const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [risky] } });
    await assertBothRefuse(
      track(createTempConfig(doc)),
      at('hooks.mappings[0]'),
      'mapping "relay"',
      'its sender is not verified',
      'allowUnsafeExternalContent: true',
      'to: "{{payload.to}}"',
      'acceptRisk: ["exfiltration"]',
    );
    const accepted = { ...risky, acceptRisk: ['exfiltration'] };
    const ok = createTempConfig(
      await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [accepted] } }),
    );
    const result = await runHookgate(['check', '--config', track(ok).path], { env: { HOOKGATE_HOME: ok.dir } });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout + result.stderr, /hooks\.mappings\[0\]\.acceptRisk/);
  });

  describe('hooks.transformsDir outside <config dir>/hooks/transforms', () => {
    it('refuses a relative path that climbs out ("../x")', async () => {
      const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, transformsDir: '../x' } });
      await assertBothRefuse(track(createTempConfig(doc)), at('hooks.transformsDir'));
    });

    it('refuses an absolute path elsewhere', async () => {
      const elsewhere = tempDir();
      const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, transformsDir: elsewhere } });
      await assertBothRefuse(track(createTempConfig(doc)), at('hooks.transformsDir'));
    });

    it('refuses a symlink inside the root that points outside', async () => {
      const dir = tempDir();
      const outside = tempDir();
      mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
      symlinkSync(outside, join(dir, 'hooks', 'transforms', 'escape'), 'dir');
      const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, transformsDir: 'escape' } });
      await assertBothRefuse(createTempConfig(doc, { dir }), at('hooks.transformsDir'));
    });

    it('accepts a directory inside the root', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'hooks', 'transforms', 'inside'), { recursive: true });
      const temp = createTempConfig(
        await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, transformsDir: 'inside' } }),
        { dir },
      );
      const result = await runHookgate(['check', '--config', temp.path], { env: { HOOKGATE_HOME: dir } });
      assert.equal(result.code, 0, result.stderr);
    });
  });

  it('refuses an unknown top-level key', async () => {
    const doc = await configWith({});
    doc['hookz'] = { enabled: true };
    await assertBothRefuse(track(createTempConfig(doc)), at('hookz'), /unknown key/i);
  });

  it('refuses an unknown nested key (hooks.tokn)', async () => {
    const doc = await configWith({ hooks: { enabled: true, token: HOOK_TOKEN, tokn: 'typo' } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.tokn'));
  });

  const deeperUnknown: Array<[string, { [section: string]: unknown }, string]> = [
    [
      'inside hooks.authRateLimit',
      { hooks: { enabled: true, token: HOOK_TOKEN, authRateLimit: { maxFailure: 3 } } },
      'hooks.authRateLimit.maxFailure',
    ],
    ['inside an array element', { agents: { list: [{ id: 'main', defualt: true }] } }, 'agents.list[0].defualt'],
    ['inside gateway.auth', { gateway: { auth: { token: GATEWAY_TOKEN, tokn: 'x' } } }, 'gateway.auth.tokn'],
  ];
  for (const [where, overrides, path] of deeperUnknown) {
    it(`refuses an unknown key ${where} (${path})`, async () => {
      await assertBothRefuse(track(createTempConfig(await configWith(overrides))), at(path));
    });
  }

  it('refuses a mistyped boolean (hooks.enabled: "yes")', async () => {
    const doc = await configWith({ hooks: { enabled: 'yes', token: HOOK_TOKEN } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.enabled'));
  });

  it('refuses a mistyped number (gateway.port: "80")', async () => {
    const doc = baseConfig({ gateway: { port: '80', auth: { token: GATEWAY_TOKEN } } });
    await assertBothRefuse(track(createTempConfig(doc)), at('gateway.port'));
  });

  it('reports every issue at once', async () => {
    const doc = baseConfig({
      gateway: { port: '80', auth: { token: GATEWAY_TOKEN } },
      hooks: { enabled: true, token: HOOK_TOKEN, tokn: 'x' },
    });
    await assertBothRefuse(track(createTempConfig(doc)), at('gateway.port'), at('hooks.tokn'));
  });

  it('refuses invalid JSON5, saying where', async () => {
    const text = '{\n  gateway: { port: 0 },\n  hooks: { enabled: true token: "x" },\n}\n';
    await assertBothRefuse(track(createTempConfig(text)), /JSON5/, /\b3:\d+/);
  });

  it('refuses an unset ${ENV} variable, naming the path and the variable', async () => {
    const doc = await configWith({ hooks: { enabled: true, token: '${HOOKGATE_E2E_UNSET_VAR}' } });
    await assertBothRefuse(track(createTempConfig(doc)), at('hooks.token'), 'HOOKGATE_E2E_UNSET_VAR');
  });

  it('refuses an unset ${ENV} variable inside an array, naming the element', async () => {
    const doc = await configWith({
      gateway: { auth: { token: GATEWAY_TOKEN }, trustedProxies: ['127.0.0.1', '${HOOKGATE_E2E_UNSET_PROXY}'] },
    });
    await assertBothRefuse(track(createTempConfig(doc)), at('gateway.trustedProxies[1]'), 'HOOKGATE_E2E_UNSET_PROXY');
  });

  it('refuses a trusted proxy that is not an address or CIDR range', async () => {
    const doc = await configWith({ gateway: { auth: { token: GATEWAY_TOKEN }, trustedProxies: ['proxy.local'] } });
    await assertBothRefuse(track(createTempConfig(doc)), at('gateway.trustedProxies[0]'));
  });

  it('refuses to serve when gateway.port is already taken, naming the address', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const temp = track(createTempConfig(baseConfig({ gateway: { port, auth: { token: GATEWAY_TOKEN } } })));
      const result = await runHookgate(['serve', '--config', temp.path], {
        env: { HOOKGATE_HOME: temp.dir },
        timeoutMs: 15_000,
      });
      assertRefused(result, `127.0.0.1:${port}`);
      assert.match(result.stderr, /already in use/);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'an operator message, not a stack trace');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses to serve a corrupt database in one line naming the file and the cause', async () => {
    const temp = track(createTempConfig(baseConfig({ gateway: { auth: { token: GATEWAY_TOKEN } } })));
    mkdirSync(join(temp.dir, 'state'), { recursive: true });
    writeFileSync(temp.storePath, Buffer.alloc(8192, 'not a database '));
    const result = await runHookgate(['serve', '--config', temp.path], {
      env: { HOOKGATE_HOME: temp.dir },
      timeoutMs: 15_000,
    });
    assertRefused(result, temp.storePath);
    assert.equal(
      result.stderr,
      `hookgate: cannot open the SQLite store ${temp.storePath}: the file is not a SQLite database, or is corrupt (restore it from a backup, or move it away to start afresh)\n`,
    );
  });

  it('refuses a missing config file given with --config', async () => {
    const dir = tempDir();
    const result = await runHookgate(['check', '--config', join(dir, 'absent.json')], { env: { HOOKGATE_HOME: dir } });
    assertRefused(result, 'absent.json');
  });
});

describe('startup: valid configurations', () => {
  it('passes check with exit 0 for a valid config', async () => {
    const temp = track(createTempConfig(await configWith({})));
    const result = await runHookgate(['check', '--config', temp.path], { env: { HOOKGATE_HOME: temp.dir } });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ok:/m);
  });

  it('finds the config through HOOKGATE_CONFIG when --config is absent', async () => {
    const temp = track(createTempConfig(await configWith({})));
    const ok = await runHookgate(['check'], { env: { HOOKGATE_HOME: tempDir(), HOOKGATE_CONFIG: temp.path } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(ok.stdout.includes(temp.path), ok.stdout);
  });

  it('substitutes ${HOOK_TOKEN} from the environment when serving', async () => {
    const port = await freePort();
    const doc = baseConfig({
      gateway: { port, auth: { token: GATEWAY_TOKEN }, logLevel: 'warn' },
      hooks: { enabled: true, token: '${HOOK_TOKEN}' },
    });
    const temp = track(createTempConfig(doc));
    const token = 'from-the-environment-91be';
    const gw = await spawnGateway(['--config', temp.path], port, {
      env: { HOOKGATE_HOME: temp.dir, HOOK_TOKEN: token },
    });
    try {
      const ok = await post(port, '/hooks/wake', { text: 'env token' }, { auth: token });
      assert.equal(ok.status, 200, ok.text);
      const literal = await post(port, '/hooks/wake', { text: 'x' }, { auth: '${HOOK_TOKEN}' });
      assert.equal(literal.status, 401, literal.text);
    } finally {
      await gw.stop();
    }
  });
});

describe('startup: first run without a config', () => {
  const DEFAULT_PORT = 8787;
  let home: string;
  let free = true;
  before(async () => {
    home = tempDir();
    free = await isPortFree(DEFAULT_PORT);
  });

  it('writes a config, prints the token once and a curl line whose token works', async (t) => {
    if (!free) {
      t.skip(`port ${DEFAULT_PORT} (the first-run default) is in use on this machine`);
      return;
    }
    const configPath = join(home, 'hookgate.json');
    assert.equal(existsSync(configPath), false);
    const gw = await spawnGateway([], DEFAULT_PORT, { env: { HOOKGATE_HOME: home } });
    let stdout: string;
    try {
      // The curl line is printed right after listening; give it a moment to reach us.
      for (let i = 0; i < 100 && !gw.output().stdout.includes('Dashboard: '); i++)
        await new Promise((r) => setTimeout(r, 50));
      stdout = gw.output().stdout;
      assert.ok(existsSync(configPath), 'config written under HOOKGATE_HOME');
      const token = /hooks token:\s+(\S+)/.exec(stdout)?.[1];
      assert.ok(token !== undefined, `hooks token printed: ${stdout}`);
      assert.equal(stdout.match(/hooks token:/g)?.length, 1, 'printed once');
      const gatewayToken = /gateway token:\s+(\S+)/.exec(stdout)?.[1];
      assert.match(
        stdout,
        new RegExp(`Dashboard: http://127\\.0\\.0\\.1:${DEFAULT_PORT}/admin \\(log in with the gateway token above`),
      );
      const dashboard = await send(DEFAULT_PORT, '/admin/api/requests', { method: 'GET', auth: gatewayToken! });
      assert.equal(dashboard.status, 200, 'the printed gateway token opens the dashboard');
      assert.ok(readFileSync(configPath, 'utf8').includes(token), 'the printed token is the one in the config');

      const curl = stdout.split('\n').find((l) => l.trim().startsWith('curl '));
      assert.ok(curl !== undefined, `curl line printed: ${stdout}`);
      const url = /\s(http:\/\/\S+)/.exec(curl)?.[1];
      const bearer = /-H 'Authorization: Bearer ([^']+)'/.exec(curl)?.[1];
      const data = /-d '([^']+)'/.exec(curl)?.[1];
      assert.ok(url !== undefined && bearer !== undefined && data !== undefined, `curl line parses: ${curl}`);
      assert.equal(bearer, token);
      const parsed = new URL(url);
      assert.equal(parsed.hostname, '127.0.0.1');
      assert.equal(Number(parsed.port), DEFAULT_PORT);
      const res = await post(DEFAULT_PORT, parsed.pathname, data, { auth: bearer });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.json as { ok: boolean }).ok, true);
    } finally {
      await gw.stop();
    }
  });

  it('does not print the token again on the next start', async (t) => {
    if (!free) {
      t.skip(`port ${DEFAULT_PORT} is in use on this machine`);
      return;
    }
    const configPath = join(home, 'hookgate.json');
    if (!existsSync(configPath)) {
      t.skip('the first-run test did not write a config');
      return;
    }
    const written = readFileSync(configPath, 'utf8');
    const token = /hooks:\s*{[^}]*token:\s*"([^"]+)"/.exec(written)?.[1];
    assert.ok(token !== undefined, written);
    const gw = await spawnGateway([], DEFAULT_PORT, { env: { HOOKGATE_HOME: home } });
    try {
      const res = await post(DEFAULT_PORT, '/hooks/wake', { text: 'second start' }, { auth: token });
      assert.equal(res.status, 200, res.text);
      const { stdout, stderr } = gw.output();
      assert.ok(!stdout.includes(token) && !stderr.includes(token), 'the token is not shown again');
      assert.equal(readFileSync(configPath, 'utf8'), written, 'the config is not rewritten');
    } finally {
      await gw.stop();
    }
  });
});
