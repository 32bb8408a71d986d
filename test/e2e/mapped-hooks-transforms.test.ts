/**
 * Mapped hooks end to end, part 2: transform modules under `<config dir>/hooks/transforms/`,
 * called by the running gateway: exports, results (skip, keep, override, switch action), what a
 * transform sees, failures (generic 500 to the caller, the real error in the log), timeouts,
 * TypeScript modules and hot reload.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, assertInvalidField } from '../helpers/assert-response.js';
import { post, type HttpResult } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { startMappedGateway, type MappedGateway } from './mapped-hooks-harness.js';

/** Generous for TypeScript: the first load starts the loader thread and amaro on a busy machine. */
const TS_TIMEOUT_MS = 30_000;

const TRANSFORMS: Record<string, string> = {
  'default.js': 'export default (input) => ({ message: `default saw n=${input.payload.n}` });',
  'named.js': [
    'export default () => { throw new Error("the default export must not be called"); };',
    'export function toAction(input) { return { message: `named saw n=${input.payload.n}` }; }',
  ].join('\n'),
  'async.js':
    'export default async (input) => { await new Promise((r) => setTimeout(r, 30)); return { message: `async saw n=${input.payload.n}` }; };',
  'skip.js': 'export default () => null;',
  'nothing.js': 'export default () => {};',
  'partial.js': 'export default (input) => ({ message: `partial ${input.payload.n}`, sessionKey: "hook:partial:1" });',
  'to-wake.js': 'export default () => ({ action: "wake", text: "switched to wake", mode: "next-heartbeat" });',
  'to-agent.js':
    'export default () => ({ action: "agent", message: "switched to agent", name: "Switched", deliver: false });',
  'echo-input.js': 'export default (input) => ({ message: JSON.stringify(input) });',
  'throws.js': 'export default () => { throw new Error("kaboom-7f3a: database password rejected"); };',
  'syntax.js': 'export default (input) => { return { message: ; };',
  'not-fn.js': 'export default { message: "an object, not a function" };',
  'string.js': 'export default () => "just a string";',
  'array.js': 'export default () => [{ message: "in an array" }];',
  'never.js': 'export default () => new Promise(() => {});',
  'bad-channel.js': 'export default () => ({ channel: "fax" });',
  'typed.ts': [
    'interface HookInput { payload: { n: number; title: string }; path: string }',
    'enum Level { Low = "low", High = "high" }',
    'interface Action { message: string; thinking: Level }',
    'export default function shape(input: HookInput): Action {',
    '  const doubled: number = input.payload.n * 2;',
    '  return { message: `typed ${input.payload.title} x${doubled}`, thinking: doubled > 5 ? Level.High : Level.Low };',
    '}',
  ].join('\n'),
  'lib/format.ts': 'export function formatTitle(title: string): string {\n  return `[${title.toUpperCase()}]`;\n}',
  'uses-helper.ts': [
    'import { formatTitle } from "./lib/format.js";',
    'export default (input: { payload: { title: string } }): { message: string } => ({ message: formatTitle(input.payload.title) });',
  ].join('\n'),
  'pre.ts': 'export default (): { message: string } => ({ message: "compiled from ts" });',
  'reload.js': 'export default () => ({ message: "reload v1" });',
  'sandboxed.js': [
    'import { readFileSync } from "node:fs";',
    'const read = (url) => { try { readFileSync(url, "utf8"); return "read"; } catch (e) { return e.code; } };',
    'export default () => ({',
    '  message: JSON.stringify({',
    '    env: Object.keys(process.env),',
    '    token: process.env.GITHUB_TOKEN,',
    '    config: read(new URL("../../hookgate.json", import.meta.url)),',
    '  }),',
    '});',
  ].join('\n'),
};

/** Given to one mapping's transform only, through `transform.env`. */
const GIVEN_TOKEN = 'ghp_0123456789abcdefGivenToOneTransform';

/** An agent mapping at `/hooks/<path>` running `module`; quiet (no delivery, no immediate heartbeat). */
function mapping(path: string, module: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: path,
    match: { path },
    action: 'agent',
    name: 'Templated',
    messageTemplate: 'templated n={{n}}',
    deliver: false,
    wakeMode: 'next-heartbeat',
    transform: { module, ...(module.endsWith('.ts') ? { timeoutMs: TS_TIMEOUT_MS } : {}) },
    ...extra,
  };
}

const CONFIG = baseConfig({
  hooks: {
    enabled: true,
    token: HOOK_TOKEN,
    allowedSessionKeyPrefixes: ['hook:'],
    mappings: [
      mapping('default', 'default.js'),
      mapping('named', 'named.js', { transform: { module: 'named.js', export: 'toAction' } }),
      mapping('async', 'async.js'),
      mapping('skip', 'skip.js'),
      mapping('nothing', 'nothing.js'),
      mapping('partial', 'partial.js'),
      mapping('to-wake', 'to-wake.js'),
      mapping('to-agent', 'to-agent.js', { action: 'wake', textTemplate: 'templated wake' }),
      mapping('echo-input', 'echo-input.js'),
      mapping('throws', 'throws.js'),
      mapping('syntax', 'syntax.js'),
      mapping('not-fn', 'not-fn.js'),
      mapping('string', 'string.js'),
      mapping('array', 'array.js'),
      mapping('never', 'never.js', { transform: { module: 'never.js', timeoutMs: 200 } }),
      mapping('bad-channel', 'bad-channel.js'),
      mapping('typed', 'typed.ts'),
      mapping('uses-helper', 'uses-helper.ts'),
      mapping('pre', 'pre.ts'),
      mapping('reload', 'reload.js'),
      mapping('sandboxed', 'sandboxed.js', {
        transform: { module: 'sandboxed.js', env: { GITHUB_TOKEN: GIVEN_TOKEN, REGION: 'eu-west-1' } },
      }),
    ],
  },
});

let gw: MappedGateway;
before(async () => {
  gw = await startMappedGateway(CONFIG, { transforms: TRANSFORMS });
  // A precompiled pre.js, newer than pre.ts: the gateway must run it instead of compiling the .ts.
  gw.writeTransform('pre.js', 'export default () => ({ message: "precompiled js" });', 5);
});
after(() => gw.stop());

/** Runs, and system events other than run summaries (earlier runs may still be finishing). */
async function storedCounts(): Promise<{ runs: number; events: number }> {
  const runs = (await gw.gateway.store.listRuns({ limit: 10_000 })).length;
  const events = (await gw.gateway.store.listSystemEvents({ limit: 10_000 })).filter(
    (e) => !e.text.startsWith('Hook '),
  ).length;
  return { runs, events };
}

/** Asserts the generic transform failure: 500, the catalog sentence only, no trace of internals. */
function assertGenericFailure(res: HttpResult, ...secrets: string[]): void {
  assertError(res, 500, 'transform_failed');
  assert.deepEqual(res.json, { ok: false, error: 'The hook transform failed.', code: 'transform_failed' });
  for (const s of [...secrets, 'transforms', '.js', 'stack', ' at '])
    assert.ok(!res.text.includes(s), `body leaks "${s}": ${res.text}`);
}

/** Log lines at level error that mention `needle`. */
function errorLogsWith(needle: string): string[] {
  return gw.logLines.filter((line) => (JSON.parse(line) as { level?: unknown }).level === 50 && line.includes(needle));
}

describe('mapped hooks: transform results', () => {
  it('calls the default export', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/default', { n: 1 }))).message, 'default saw n=1');
  });

  it('calls the export named by transform.export', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/named', { n: 2 }))).message, 'named saw n=2');
  });

  it('awaits an async transform', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/async', { n: 3 }))).message, 'async saw n=3');
  });

  it('answers 204 with an empty body and stores nothing when the transform returns null', async () => {
    const before = await storedCounts();
    const res = await post(gw.port, '/hooks/skip', { n: 4 });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    assert.deepEqual(await storedCounts(), before);
  });

  it('keeps the template-built action when the transform returns nothing', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/nothing', { n: 5 }));
    assert.equal(run.message, 'templated n=5');
    assert.equal(run.name, 'Templated');
  });

  it('overrides only the fields the transform returns', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/partial', { n: 6 }));
    assert.equal(run.message, 'partial 6');
    assert.equal(run.sessionKey, 'hook:partial:1');
    assert.equal(run.name, 'Templated');
    assert.equal(run.deliver, false);
    assert.equal(run.wakeMode, 'next-heartbeat');
  });

  it('switches an agent mapping to a wake', async () => {
    const event = await gw.eventOf(await post(gw.port, '/hooks/to-wake', { n: 7 }));
    assert.equal(event.text, 'switched to wake');
    assert.equal(event.mode, 'next-heartbeat');
  });

  it('switches a wake mapping to an agent run', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/to-agent', { n: 8 }));
    assert.equal(run.message, 'switched to agent');
    assert.equal(run.name, 'Switched');
  });

  it('validates what the transform returns (channel enum) with 400 naming channel', async () => {
    assertInvalidField(await post(gw.port, '/hooks/bad-channel', { n: 9 }), 'channel');
  });
});

describe('mapped hooks: what a transform sees', () => {
  interface Seen {
    payload: unknown;
    headers: Record<string, string>;
    url: string;
    path: string;
  }

  async function seen(res: HttpResult): Promise<Seen> {
    return JSON.parse((await gw.runOf(res)).message) as Seen;
  }

  it('receives payload, headers, url and path, without Authorization', async () => {
    const payload = { n: 10, nested: { list: [1, 'two'] } };
    const s = await seen(
      await post(gw.port, '/hooks/echo-input?delivery=42', payload, {
        headers: { 'X-GitHub-Event': 'push', 'X-Mixed-Case': 'Value' },
      }),
    );
    assert.deepEqual(s.payload, payload);
    // `url` is a URL (OpenClaw's shape); JSON.stringify writes its href, on the request's host.
    assert.equal(s.url, `http://127.0.0.1:${gw.port}/hooks/echo-input?delivery=42`);
    assert.equal(s.path, 'echo-input');
    assert.equal(s.headers['x-github-event'], 'push');
    assert.equal(s.headers['x-mixed-case'], 'Value');
    assert.equal(s.headers['content-type'], 'application/json');
    assert.ok(!('authorization' in s.headers), JSON.stringify(s.headers));
    assert.ok(!JSON.stringify(s).includes(HOOK_TOKEN));
  });

  it('does not receive x-hookgate-token', async () => {
    const s = await seen(
      await post(gw.port, '/hooks/echo-input', { n: 11 }, { auth: false, headers: { 'x-hookgate-token': HOOK_TOKEN } }),
    );
    assert.ok(!('x-hookgate-token' in s.headers), JSON.stringify(s.headers));
    assert.ok(!JSON.stringify(s).includes(HOOK_TOKEN));
  });
});

describe('mapped hooks: what a transform may reach', () => {
  it('has only its transform.env, cannot read the config file, and has the secret it was given scrubbed from what is stored', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/sandboxed', { n: 1 }));
    assert.deepEqual(JSON.parse(run.message), {
      env: ['GITHUB_TOKEN', 'REGION'],
      token: '[redacted]',
      config: 'ERR_ACCESS_DENIED',
    });
    assert.ok(!run.message.includes(GIVEN_TOKEN));
  });
});

describe('mapped hooks: transform failures', () => {
  it('answers a throwing transform with a generic 500 and logs the real error', async () => {
    const before = await storedCounts();
    assertGenericFailure(await post(gw.port, '/hooks/throws', { n: 12 }), 'kaboom', 'password');
    assert.ok(errorLogsWith('kaboom-7f3a: database password rejected').length >= 1, gw.logLines.join(''));
    assert.deepEqual(await storedCounts(), before);
  });

  it('answers a module with a syntax error with 500', async () => {
    assertGenericFailure(await post(gw.port, '/hooks/syntax', { n: 13 }), 'SyntaxError');
    assert.ok(errorLogsWith('syntax.js').length >= 1, gw.logLines.join(''));
  });

  it('answers an export that is not a function with 500', async () => {
    assertGenericFailure(await post(gw.port, '/hooks/not-fn', { n: 14 }));
    assert.ok(errorLogsWith('not a function').length >= 1, gw.logLines.join(''));
  });

  it('answers a transform returning a string with 500', async () => {
    assertGenericFailure(await post(gw.port, '/hooks/string', { n: 15 }), 'just a string');
  });

  it('answers a transform returning an array with 500', async () => {
    assertGenericFailure(await post(gw.port, '/hooks/array', { n: 16 }), 'in an array');
  });

  it('answers a transform that never settles with 500 after transform.timeoutMs', async () => {
    const started = performance.now();
    assertGenericFailure(await post(gw.port, '/hooks/never', { n: 17 }));
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 150, `answered after ${elapsed} ms, before the 200 ms timeout`);
    assert.ok(elapsed < 10_000, `answered after ${elapsed} ms`);
    assert.ok(errorLogsWith('timed out after 200 ms').length >= 1, gw.logLines.join(''));
  });
});

describe('mapped hooks: TypeScript transforms and reload', () => {
  it('loads a TypeScript module with annotations, interfaces and an enum', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/typed', { n: 3, title: 'Tide lag' }));
    assert.equal(run.message, 'typed Tide lag x6');
    assert.equal(run.thinking, 'high');
  });

  it('resolves "./lib/format.js" to format.ts when only the TypeScript file exists', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/uses-helper', { title: 'berth' }))).message, '[BERTH]');
  });

  it('runs a precompiled .js that is newer than the .ts beside it', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/pre', {}))).message, 'precompiled js');
  });

  it('uses an edited module on the next request, without a restart', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/reload', {}))).message, 'reload v1');
    gw.writeTransform('reload.js', 'export default (input) => ({ message: `reload v2 n=${input.payload.n}` });', 10);
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/reload', { n: 18 }))).message, 'reload v2 n=18');
  });
});
