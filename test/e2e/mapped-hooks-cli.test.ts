/**
 * Mapped hooks end to end, part 3, through the real CLI: `hookgate check` refuses bad mappings
 * (exit non-zero, the dot-path on stderr) and warns about `allowUnsafeExternalContent` without
 * refusing; `hookgate serve` runs a TypeScript transform in its own process.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readConfig } from '../../src/config/index.js';
import { openStore } from '../../src/main.js';
import { freePort, runHookgate, spawnGateway, type CliResult } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, createTempConfig, createTempDir, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TRANSFORM = 'export default () => ({ message: "ok" });';

/** A temp config dir with `files` (paths relative to the dir) written in it. */
function tempDir(files: Record<string, string> = {}): string {
  const dir = createTempDir('hookgate-mapped-check-');
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
  return dir;
}

function hooksConfig(hooks: Record<string, unknown>): ConfigDoc {
  return baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, ...hooks } });
}

async function check(config: ConfigDoc, dir = tempDir()): Promise<CliResult> {
  const temp = createTempConfig(config, { dir });
  return runHookgate(['check', '--config', temp.path], { env: { HOOKGATE_HOME: dir }, timeoutMs: 60_000 });
}

/** Exactly `path:` as `formatIssues` prints it, at a line start after the bullet. */
const at = (path: string): RegExp => new RegExp(`(^|\\s)${path.replace(/[.[\]]/g, (c) => `\\${c}`)}:`, 'm');

function assertRefused(result: CliResult, path: string): void {
  const context = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  assert.equal(result.timedOut, false, context);
  assert.notEqual(result.code, 0, context);
  assert.notEqual(result.code, null, context);
  assert.match(result.stderr, at(path), context);
}

function assertAccepted(result: CliResult): void {
  assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
}

describe('hookgate check: mapping refusals', () => {
  it('accepts a mapping whose transform module exists inside the transforms dir (control)', async () => {
    const dir = tempDir({ 'hooks/transforms/shape.js': TRANSFORM });
    assertAccepted(
      await check(hooksConfig({ mappings: [{ match: { path: 'shape' }, transform: { module: 'shape.js' } }] }), dir),
    );
  });

  it('refuses an absolute transform.module', async () => {
    const dir = tempDir({ 'hooks/transforms/shape.js': TRANSFORM });
    const module = join(dir, 'hooks', 'transforms', 'shape.js');
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'shape' }, transform: { module } }] }), dir),
      'hooks.mappings[0].transform.module',
    );
  });

  it('refuses a transform.module that climbs out with ".."', async () => {
    const dir = tempDir({ 'hooks/escape.js': TRANSFORM });
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, transform: { module: '../escape.js' } }] }), dir),
      'hooks.mappings[0].transform.module',
    );
  });

  it('refuses a symlink inside the transforms dir that points to a file outside', async () => {
    const dir = tempDir({ 'outside/evil.js': TRANSFORM });
    symlinkSync(join(dir, 'outside', 'evil.js'), join(dir, 'hooks', 'transforms', 'evil.js'));
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, transform: { module: 'evil.js' } }] }), dir),
      'hooks.mappings[0].transform.module',
    );
  });

  it('refuses a missing transform module', async () => {
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, transform: { module: 'missing.js' } }] })),
      'hooks.mappings[0].transform.module',
    );
  });

  it('refuses a transform.module that is a directory', async () => {
    const dir = tempDir({ 'hooks/transforms/shapes/a.js': TRANSFORM });
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, transform: { module: 'shapes' } }] }), dir),
      'hooks.mappings[0].transform.module',
    );
  });

  it('accepts a transform.module whose file name starts with two dots (it is inside the transforms dir)', async () => {
    const dir = tempDir({ 'hooks/transforms/..dotted.js': TRANSFORM });
    assertAccepted(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, transform: { module: '..dotted.js' } }] }), dir),
    );
  });

  it('accepts a hooks.transformsDir whose name starts with two dots (it is inside the transforms root)', async () => {
    const dir = tempDir({ 'hooks/transforms/..team/a.js': TRANSFORM });
    assertAccepted(await check(hooksConfig({ transformsDir: '..team' }), dir));
  });

  for (const path of ['wake', '/agent/', 'agent', '/wake']) {
    it(`refuses match.path "${path}" (a built-in endpoint)`, async () => {
      assertRefused(
        await check(hooksConfig({ mappings: [{ match: { path: 'ok' } }, { match: { path } }] })),
        'hooks.mappings[1].match.path',
      );
    });
  }

  const templated: Array<[string, string]> = [
    ['messageTemplate', 'Hi {{ payload.a() }}'],
    ['textTemplate', '{{ a + 1 }}'],
    ['sessionKey', 'hook:{{ id.toString() }}'],
    ['name', '{{ process.env.HOME }}x{{ a[b] }}'],
  ];
  for (const [key, value] of templated) {
    it(`refuses an invalid template expression in ${key}`, async () => {
      assertRefused(
        await check(hooksConfig({ mappings: [{ match: { path: 'x' }, [key]: value }] })),
        `hooks.mappings[0].${key}`,
      );
    });
  }

  it('refuses an unknown preset name', async () => {
    assertRefused(await check(hooksConfig({ presets: ['gmail', 'outlook'] })), 'hooks.presets[1]');
  });

  it('refuses a channel outside the enum', async () => {
    assertRefused(
      await check(hooksConfig({ mappings: [{ match: { path: 'x' }, channel: 'fax' }] })),
      'hooks.mappings[0].channel',
    );
  });

  it('refuses a hooks.gmail.thinking that is not a thinking level (every gmail hook would fail with 400)', async () => {
    assertRefused(
      await check(hooksConfig({ presets: ['gmail'], gmail: { thinking: 'turbo' } })),
      'hooks.gmail.thinking',
    );
  });

  it('refuses hooks.transformsDir outside the transforms root', async () => {
    assertRefused(await check(hooksConfig({ transformsDir: '../../elsewhere' })), 'hooks.transformsDir');
  });

  it('prints every mapping issue at once', async () => {
    const result = await check(
      hooksConfig({
        mappings: [
          { match: { path: 'wake' } },
          { match: { path: 'x' }, messageTemplate: '{{ a() }}' },
          { match: { path: 'y' }, transform: { module: '../escape.js' } },
        ],
      }),
    );
    for (const path of [
      'hooks.mappings[0].match.path',
      'hooks.mappings[1].messageTemplate',
      'hooks.mappings[2].transform.module',
    ]) {
      assertRefused(result, path);
    }
  });
});

describe('hookgate check: allowUnsafeExternalContent', () => {
  it('warns on stderr for each mapping that sets it, and exits 0', async () => {
    const result = await check(
      hooksConfig({
        mappings: [
          { match: { path: 'a' }, allowUnsafeExternalContent: true },
          { match: { path: 'b' }, allowUnsafeExternalContent: false },
          { match: { path: 'c' } },
          { match: { path: 'd' }, allowUnsafeExternalContent: true },
        ],
      }),
    );
    assertAccepted(result);
    const warnings = result.stderr.split('\n').filter((line) => /warning/i.test(line));
    assert.equal(warnings.length, 2, result.stderr);
    assert.match(warnings[0] ?? '', /hooks\.mappings\[0\]\.allowUnsafeExternalContent/);
    assert.match(warnings[1] ?? '', /hooks\.mappings\[3\]\.allowUnsafeExternalContent/);
  });

  it('prints no warning when no mapping sets it', async () => {
    const result = await check(hooksConfig({ mappings: [{ match: { path: 'a' } }] }));
    assertAccepted(result);
    assert.doesNotMatch(result.stderr, /warning/i);
  });
});

describe('hookgate serve: a TypeScript transform in the gateway process', () => {
  it('loads a .ts transform that imports "./lib/label.js" (only label.ts exists) and applies its result', async () => {
    const dir = tempDir({
      'hooks/transforms/lib/label.ts':
        'export const label = (kind: string, n: number): string => `${kind.toUpperCase()} #${n}`;',
      'hooks/transforms/route.ts': [
        'import { label } from "./lib/label.js";',
        'interface Input { payload: { kind: string; n: number; skip?: boolean } }',
        'export default (input: Input): { text: string } | null =>',
        '  input.payload.skip === true ? null : { text: label(input.payload.kind, input.payload.n) };',
      ].join('\n'),
    });
    const port = await freePort();
    const doc = hooksConfig({
      mappings: [
        {
          id: 'route',
          match: { path: 'route' },
          action: 'wake',
          textTemplate: 'templated',
          transform: { module: 'route.ts', timeoutMs: 30_000 },
        },
      ],
    });
    doc['gateway'] = { ...(doc['gateway'] as object), port };
    const temp = createTempConfig(doc, { dir });
    const proc = await spawnGateway(['--config', temp.path], port, {
      env: { HOOKGATE_HOME: dir },
      readyTimeoutMs: 60_000,
    });
    try {
      const skipped = await post(port, '/hooks/route', { kind: 'deploy', n: 1, skip: true }, { timeoutMs: 45_000 });
      assert.equal(skipped.status, 204, skipped.text);
      const woke = await post(port, '/hooks/route', { kind: 'deploy', n: 2 }, { timeoutMs: 45_000 });
      assert.equal(woke.status, 200, woke.text);
    } finally {
      assert.equal(await proc.stop(), 0, proc.output().stderr);
    }
    const store = await openStore(readConfig(temp.path, {}), { mode: 'read' });
    try {
      const texts = (await store.listSystemEvents({ limit: 100 })).map((e) => e.text);
      assert.deepEqual(texts, ['DEPLOY #2']);
    } finally {
      await store.close();
    }
  });
});
