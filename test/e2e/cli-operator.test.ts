/**
 * The operator's command line, through the real bundle: --version, each command's help, `send`
 * to a running gateway, `mappings test` as a dry run, and `check`/`serve` refusing alike.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMAND_HELP } from '../../src/cli/command-help.js';
import { freePort, runHookgate, type CliResult } from '../helpers/gateway-process.js';
import { startTestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, createTempConfig, createTempDir, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const PACKAGE_JSON = fileURLToPath(new URL('../../../package.json', import.meta.url));
const GITHUB_FIXTURE = fileURLToPath(
  new URL('../../../test/fixtures/github-pull-request-opened.json', import.meta.url),
);

/** A temp config dir holding `config` and `files` (paths relative to the dir). */
function configDir(config: ConfigDoc, files: Record<string, string> = {}): { dir: string; path: string } {
  const dir = createTempDir('hookgate-cli-op-');
  dirs.push(dir);
  mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  const temp = createTempConfig(config, { dir });
  return { dir, path: temp.path };
}

function out(r: CliResult): string {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
}

describe('hookgate --version and --help', () => {
  it('prints the version of package.json', async () => {
    const version = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runHookgate([flag]);
      assert.equal(r.code, 0, out(r));
      assert.equal(r.stdout, `hookgate ${version}\n`);
    }
  });

  for (const command of Object.keys(COMMAND_HELP)) {
    it(`prints the own usage of "${command}" for "${command} --help"`, async () => {
      const r = await runHookgate([command, '--help']);
      assert.equal(r.code, 0, out(r));
      assert.ok(r.stdout.startsWith(`Usage: hookgate ${command}`), r.stdout);
      assert.doesNotMatch(r.stdout, /^Commands:/m, 'not the global help');
    });
  }

  it('prints a command usage for "help <command>" too', async () => {
    const r = await runHookgate(['help', 'send']);
    assert.equal(r.code, 0, out(r));
    assert.ok(r.stdout.startsWith('Usage: hookgate send'), r.stdout);
  });

  it('answers an unknown option with the command usage and exit 2, not a parser stack', async () => {
    const r = await runHookgate(['runs', '--stat']);
    assert.equal(r.code, 2, out(r));
    assert.match(r.stderr, /Unknown option '--stat'/);
    assert.match(r.stderr, /Usage: hookgate runs/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });
});

describe('hookgate send', () => {
  it("--sign signs as the mapping's sender (GitHub, Stripe, Slack), sending no hook token", async () => {
    const gw = await startTestGateway(
      baseConfig({
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 } } },
        hooks: {
          mappings: [
            {
              id: 'gh',
              match: { path: 'gh' },
              action: 'wake',
              textTemplate: 'gh {{zen}}',
              verify: { kind: 'github', secret: 'gh-secret-for-send', required: true },
            },
            {
              id: 'st',
              match: { path: 'st' },
              action: 'wake',
              textTemplate: 'st {{zen}}',
              verify: { kind: 'stripe', secret: 'whsec_stripe_send', required: true },
            },
            {
              id: 'sl',
              match: { path: 'sl' },
              action: 'wake',
              textTemplate: 'sl {{zen}}',
              verify: { kind: 'slack', secret: 'slack-secret-send', required: true },
            },
          ],
        },
      }),
    );
    try {
      const env = { HOOKGATE_PORT: String(gw.port) };
      for (const hook of ['gh', 'st', 'sl']) {
        const r = await runHookgate(['send', hook, '--sign', '--config', gw.temp.path, '--data', '{"zen":"signed"}'], {
          env,
        });
        assert.equal(r.code, 0, out(r));
        assert.match(r.stdout, /^200 OK\n/);
      }
      const texts = (await gw.gateway.store.listSystemEvents({ limit: 10 })).map((e) => e.text).sort();
      assert.deepEqual(texts, ['gh signed', 'sl signed', 'st signed']);
      const unsigned = await runHookgate(['send', 'gh', '--config', gw.temp.path, '--data', '{"zen":"token only"}'], {
        env,
      });
      assert.equal(unsigned.code, 1, 'verify.required refuses the hook token alone');
      const none = await runHookgate(['send', 'wake', '--sign', '--config', gw.temp.path, '--data', '{"text":"x"}'], {
        env,
      });
      assert.equal(none.code, 1);
      assert.match(none.stderr, /no mapping with verify serves "wake"/);
    } finally {
      await gw.stop();
    }
  });

  it('posts to the running gateway with the config token and prints status and body', async () => {
    const gw = await startTestGateway(baseConfig());
    try {
      const env = { HOOKGATE_PORT: String(gw.port), HOOKGATE_HOME: gw.temp.dir };
      const ok = await runHookgate(
        ['send', 'wake', '--config', gw.temp.path, '--data', '{"text":"from send","mode":"next-heartbeat"}'],
        { env },
      );
      assert.equal(ok.code, 0, out(ok));
      assert.match(ok.stdout, /^200 OK\n\{"ok":true,"mode":"next-heartbeat","eventId":"[0-9a-f-]{36}"\}\n$/);
      const events = await gw.gateway.store.listSystemEvents({ limit: 5 });
      assert.ok(
        events.some((e) => e.text === 'from send'),
        'the wake was recorded',
      );
      assert.ok(!ok.stdout.includes(HOOK_TOKEN) && !ok.stderr.includes(HOOK_TOKEN), 'the token is not printed');

      const bad = await runHookgate(
        ['send', 'agent', '--config', gw.temp.path, '--data', '{"message":"x","channel":"fax"}'],
        { env },
      );
      assert.equal(bad.code, 1, out(bad));
      assert.match(bad.stdout, /^400 Bad Request\n.*"code":"invalid_payload"/);
    } finally {
      await gw.stop();
    }
  });

  it('reads the payload from --file', async () => {
    const gw = await startTestGateway(baseConfig());
    try {
      const file = join(gw.temp.dir, 'payload.json');
      writeFileSync(file, JSON.stringify({ message: 'from a file', deliver: false }));
      const r = await runHookgate(['send', 'agent', '--config', gw.temp.path, '--file', file], {
        env: { HOOKGATE_PORT: String(gw.port) },
      });
      assert.equal(r.code, 0, out(r));
      assert.match(r.stdout, /^202 Accepted\n\{"ok":true,"runId":/);
    } finally {
      await gw.stop();
    }
  });

  it('says the gateway is not running when nothing listens', async () => {
    const { dir, path } = configDir(baseConfig());
    const port = await freePort();
    const r = await runHookgate(['send', 'wake', '--config', path, '--data', '{"text":"x"}'], {
      env: { HOOKGATE_PORT: String(port), HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 1, out(r));
    assert.match(r.stderr, /connection refused; is the gateway running/);
  });

  it("sends a payload nested too deep as it is, and prints the gateway's 400 json_too_deep", async () => {
    const gw = await startTestGateway(baseConfig());
    try {
      const file = join(gw.temp.dir, 'deep.json');
      writeFileSync(file, `{"text":${'['.repeat(5000)}1${']'.repeat(5000)}}`);
      const r = await runHookgate(['send', 'wake', '--config', gw.temp.path, '--file', file], {
        env: { HOOKGATE_PORT: String(gw.port) },
      });
      assert.equal(r.code, 1, out(r));
      assert.match(r.stdout, /^400 Bad Request\n.*"code":"json_too_deep"/);
    } finally {
      await gw.stop();
    }
  });

  it('refuses a payload that is not JSON, or none, with exit 2', async () => {
    const { path } = configDir(baseConfig());
    assert.equal((await runHookgate(['send', 'wake', '--config', path, '--data', '{oops'])).code, 2);
    const none = await runHookgate(['send', 'wake', '--config', path]);
    assert.equal(none.code, 2, out(none));
    assert.match(none.stderr, /needs a payload/);
  });
});

describe('hookgate mappings test', () => {
  const mapping = {
    id: 'github',
    match: { path: 'github' },
    action: 'agent',
    name: 'GitHub',
    sessionKey: 'hook:github:{{repository.full_name}}',
    messageTemplate: 'PR #{{number}} {{action}}: {{pull_request.title}}',
    transform: { module: 'only-opened.mjs' },
  };
  // Written the OpenClaw way: a named `transform` export, `ctx.url` a URL, `kind` for the action.
  const TRANSFORM = [
    'export function transform(ctx) {',
    '  if (ctx.payload.action !== "opened") return null;',
    '  return { kind: "agent", deliver: false, name: "GitHub " + (ctx.url.searchParams.get("via") ?? "direct") };',
    '}',
  ].join('\n');

  it('prints the action the gateway would build, and stores nothing', async () => {
    const { dir, path } = configDir(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [mapping] } }), {
      'hooks/transforms/only-opened.mjs': TRANSFORM,
    });
    const r = await runHookgate(['mappings', 'test', 'github', '--config', path, '--file', GITHUB_FIXTURE], {
      env: { HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 0, out(r));
    const shown = JSON.parse(r.stdout) as { status: number; kind: string; action: Record<string, unknown> };
    assert.equal(shown.status, 202);
    assert.equal(shown.kind, 'agent');
    assert.equal(shown.action['message'], 'PR #318 opened: Retry berth allocation when the tide table lags');
    assert.equal(shown.action['sessionKey'], 'hook:github:tidewater-labs/harbor-scheduler');
    assert.equal(shown.action['name'], 'GitHub direct');
    assert.equal(shown.action['deliver'], false);
    assert.equal(shown.action['agentId'], 'main');
    assert.equal(existsSync(join(dir, 'state', 'hookgate.db')), false, 'no store was created');
  });

  it('shows a skip when the transform skips', async () => {
    const { dir, path } = configDir(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [mapping] } }), {
      'hooks/transforms/only-opened.mjs': TRANSFORM,
    });
    const r = await runHookgate(['mappings', 'test', 'github', '--config', path, '--data', '{"action":"closed"}'], {
      env: { HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 0, out(r));
    assert.deepEqual(JSON.parse(r.stdout), { status: 204, kind: 'skip', action: null });
  });

  it('shows the refusal the gateway would answer, with its code', async () => {
    const { dir, path } = configDir(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [mapping] } }), {
      'hooks/transforms/only-opened.mjs': TRANSFORM,
    });
    const r = await runHookgate(['mappings', 'test', 'gitlab', '--config', path, '--data', '{}'], {
      env: { HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 1, out(r));
    const shown = JSON.parse(r.stdout) as { status: number; code: string };
    assert.deepEqual([shown.status, shown.code], [404, 'hook_not_found']);
  });

  it("shows the gateway's json_too_deep refusal for a payload nested 5,000 levels deep", async () => {
    const deep = { id: 'deep', match: { path: 'deep' }, action: 'wake', textTemplate: 'got {{ a }}' };
    const { dir, path } = configDir(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, mappings: [deep] } }));
    const file = join(dir, 'deep.json');
    writeFileSync(file, `{"a":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
    const r = await runHookgate(['mappings', 'test', 'deep', '--config', path, '--file', file], {
      env: { HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 1, out(r));
    assert.equal(r.stderr, '', out(r));
    const shown = JSON.parse(r.stdout) as { status: number; code: string };
    assert.deepEqual([shown.status, shown.code], [400, 'json_too_deep']);
  });

  it('shows why a transform failed, which the gateway only logs', async () => {
    const { dir, path } = configDir(
      baseConfig({
        hooks: { enabled: true, token: HOOK_TOKEN, mappings: [{ ...mapping, transform: { module: 'throws.mjs' } }] },
      }),
      {
        'hooks/transforms/throws.mjs':
          'export default (ctx) => { throw new Error("no field " + Object.keys(ctx.payload).length); };',
      },
    );
    const r = await runHookgate(['mappings', 'test', 'github', '--config', path, '--data', '{"a":1}'], {
      env: { HOOKGATE_HOME: dir },
    });
    assert.equal(r.code, 1, out(r));
    const shown = JSON.parse(r.stdout) as { status: number; code: string; cause: string };
    assert.deepEqual([shown.status, shown.code], [500, 'transform_failed']);
    assert.match(shown.cause, /no field 1/);
  });
});
