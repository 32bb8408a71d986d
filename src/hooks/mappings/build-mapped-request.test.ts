import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { RequestError } from '../../common/errors.js';
import { HooksSchema } from '../../config/index.js';
import type { AgentRequest, WakeRequest } from '../../policy/index.js';
import type { TransformInput, TransformRunner, TransformSpec } from '../transforms/create-transform-runner.js';
import {
  buildMappedRequest,
  MAX_ACTIONS_CHARS,
  type MappedHookCall,
  type MappedRequest,
} from './build-mapped-request.js';
import { compileMappings } from './compile-mappings.js';

const DIR = join('/srv', 'hookgate', 'hooks', 'transforms');
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

const noTransform: TransformRunner = () => Promise.reject(new Error('no transform expected'));

/** A runner that returns `result` and records what it was called with. */
function fakeRunner(result: unknown): {
  run: TransformRunner;
  calls: Array<{ spec: TransformSpec; input: TransformInput }>;
} {
  const calls: Array<{ spec: TransformSpec; input: TransformInput }> = [];
  return {
    calls,
    run: (spec, input) => {
      calls.push({ spec, input });
      return Promise.resolve(result);
    },
  };
}

function call(
  name: string,
  payload: Record<string, unknown>,
  extra: { headers?: IncomingHttpHeaders; url?: string } = {},
): MappedHookCall {
  return { name, payload, headers: extra.headers ?? {}, url: extra.url ?? `/hooks/${name}` };
}

function build(
  raw: Record<string, unknown>,
  c: MappedHookCall,
  run: TransformRunner = noTransform,
): Promise<MappedRequest> {
  const hooks = HooksSchema.parse({ enabled: true, token: 'unit-test-token', ...raw });
  return buildMappedRequest(compileMappings(hooks, DIR), run, c, NOW);
}

/** Builds with a single mapping at `/hooks/m`. */
function buildOne(
  mapping: Record<string, unknown>,
  payload: Record<string, unknown>,
  run: TransformRunner = noTransform,
  extra: { headers?: IncomingHttpHeaders; url?: string } = {},
): Promise<MappedRequest> {
  return build({ mappings: [{ id: 'm', match: { path: 'm' }, ...mapping }] }, call('m', payload, extra), run);
}

function agentOf(r: MappedRequest): AgentRequest {
  assert.equal(r.kind, 'agent', JSON.stringify(r));
  if (r.kind !== 'agent') throw new Error('unreachable');
  return r.request;
}

function wakeOf(r: MappedRequest): WakeRequest {
  assert.equal(r.kind, 'wake', JSON.stringify(r));
  if (r.kind !== 'wake') throw new Error('unreachable');
  return r.request;
}

/** Asserts a `RequestError` with `code` whose issues (when `path` is given) name `path`. */
async function assertRejects(promise: Promise<unknown>, code: string, path?: string): Promise<RequestError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof RequestError, `a RequestError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (path !== undefined) {
    const paths = (caught.issues ?? []).map((i) => i.path);
    assert.ok(paths.includes(path), `issues name "${path}": ${JSON.stringify(caught.issues)}`);
  }
  return caught;
}

describe('buildMappedRequest: templates', () => {
  it('renders every templated field from payload, headers, query, path and now', async () => {
    const request = agentOf(
      await buildOne(
        {
          action: 'agent',
          name: '{{headers.x-origin}} feed',
          messageTemplate: '{{event}} on {{path}} ref={{query.ref}} at {{now}} by {{payload.user.login}}',
          sessionKey: 'hook:feed:{{thread}}',
          to: '{{chat}}',
          model: '{{model}}',
          thinking: '{{level}}',
        },
        {
          event: 'push',
          user: { login: 'kestrel' },
          thread: 't-9',
          chat: '-100200300',
          model: 'echo/tiny',
          level: 'high',
        },
        noTransform,
        {
          headers: { 'x-origin': 'Buildkite' },
          url: '/hooks/m?ref=main&ref=ignored',
        },
      ),
    );
    assert.equal(request.message, 'push on m ref=main at 2026-01-02T03:04:05.000Z by kestrel');
    assert.equal(request.name, 'Buildkite feed');
    assert.equal(request.sessionKey, 'hook:feed:t-9');
    assert.equal(request.sessionKeyOrigin, 'mapping');
    assert.equal(request.to, '-100200300');
    assert.equal(request.model, 'echo/tiny');
    assert.equal(request.thinking, 'high');
  });

  it('shows templates the path without its slashes', async () => {
    const r = await build(
      { mappings: [{ match: { path: 'ci/builds' }, action: 'wake', textTemplate: '[{{path}}]' }] },
      call('/ci/builds/', {}),
    );
    assert.equal(wakeOf(r).text, '[ci/builds]');
  });

  it('hides credential headers from templates', async () => {
    const headers: IncomingHttpHeaders = {
      authorization: 'Bearer s3cret',
      'x-hookgate-token': 's3cret',
      'x-openclaw-token': 's3cret',
      cookie: 'sid=s3cret',
      'proxy-authorization': 'Basic s3cret',
      'x-visible': 'yes',
    };
    const r = await buildOne(
      {
        action: 'wake',
        textTemplate:
          'a[{{headers.authorization}}] b[{{headers.x-hookgate-token}}] c[{{headers.x-openclaw-token}}] ' +
          'd[{{headers.cookie}}] e[{{headers.proxy-authorization}}] f[{{headers.x-visible}}]',
      },
      {},
      noTransform,
      { headers },
    );
    assert.equal(wakeOf(r).text, 'a[] b[] c[] d[] e[] f[yes]');
  });

  it('leaves credential headers out of the whole headers object too', async () => {
    const r = await buildOne({ action: 'wake', textTemplate: '{{headers}}' }, {}, noTransform, {
      headers: { authorization: 'Bearer s3cret', 'x-hookgate-token': 's3cret', 'x-visible': 'yes' },
    });
    assert.equal(wakeOf(r).text, '{"x-visible":"yes"}');
  });

  it('refuses a message that renders empty, naming message', async () => {
    await assertRejects(
      buildOne({ action: 'agent', messageTemplate: '{{missing}}' }, {}),
      'invalid_payload',
      'message',
    );
    await assertRejects(
      buildOne({ action: 'agent', messageTemplate: '  {{missing}}\n' }, {}),
      'invalid_payload',
      'message',
    );
  });

  it('refuses a wake text that renders empty, naming text', async () => {
    await assertRejects(buildOne({ action: 'wake', textTemplate: ' {{missing}} ' }, {}), 'invalid_payload', 'text');
  });

  it('refuses a rendered thinking level that is not a level, naming thinking', async () => {
    await assertRejects(
      buildOne({ action: 'agent', messageTemplate: 'x', thinking: '{{level}}' }, { level: 'ultra' }),
      'invalid_payload',
      'thinking',
    );
  });

  it('treats optional fields that render empty as absent', async () => {
    const request = agentOf(
      await buildOne(
        {
          action: 'agent',
          messageTemplate: 'x',
          thinking: '{{level}}',
          sessionKey: '{{key}}',
          to: '{{to}}',
          model: '{{model}}',
          name: '{{name}}',
        },
        {},
      ),
    );
    assert.equal(request.thinking, undefined);
    assert.equal(request.sessionKey, undefined);
    assert.equal(request.to, undefined);
    assert.equal(request.model, undefined);
    assert.equal(request.name, 'm', 'the mapping id names the run');
  });

  it('names the run after the mapping position when it has neither name nor id', async () => {
    const r = await build(
      { mappings: [{ match: { path: 'a' } }, { match: { path: 'b' }, messageTemplate: 'x' }] },
      call('b', {}),
    );
    assert.equal(agentOf(r).name, 'mappings[1]');
  });

  it('passes the mapping fields through', async () => {
    const request = agentOf(
      await buildOne(
        {
          messageTemplate: 'x',
          agentId: 'ops',
          deliver: false,
          channel: 'telegram',
          wakeMode: 'next-heartbeat',
          timeoutSeconds: 90,
        },
        {},
      ),
    );
    assert.deepEqual(
      [request.agentId, request.deliver, request.channel, request.wakeMode, request.timeoutSeconds],
      ['ops', false, 'telegram', 'next-heartbeat', 90],
    );
  });

  it('defaults the action to agent', async () => {
    agentOf(await buildOne({ messageTemplate: 'x' }, {}));
  });

  it('uses the mapping wakeMode as a wake mode', async () => {
    assert.equal(
      wakeOf(await buildOne({ action: 'wake', textTemplate: 'x', wakeMode: 'next-heartbeat' }, {})).mode,
      'next-heartbeat',
    );
    assert.equal(wakeOf(await buildOne({ action: 'wake', textTemplate: 'x' }, {})).mode, 'now');
  });

  it('marks the source with the mapping id and its unsafe flag', async () => {
    const safe = agentOf(await buildOne({ messageTemplate: 'x' }, {}));
    assert.deepEqual(safe.source, { hook: 'm', external: true, allowUnsafeExternalContent: false });
    const unsafe = wakeOf(await buildOne({ action: 'wake', textTemplate: 'x', allowUnsafeExternalContent: true }, {}));
    assert.deepEqual(unsafe.source, { hook: 'm', external: true, allowUnsafeExternalContent: true });
  });
});

describe('buildMappedRequest: without templates', () => {
  it('reads message from the payload for an agent action', async () => {
    assert.equal(
      agentOf(await buildOne({ action: 'agent' }, { message: 'from payload', text: 'not this' })).message,
      'from payload',
    );
  });

  it('reads text from the payload for a wake action', async () => {
    assert.equal(
      wakeOf(await buildOne({ action: 'wake' }, { text: 'from payload', message: 'not this' })).text,
      'from payload',
    );
  });

  it('uses the payload as JSON when it has no such string field', async () => {
    const payload = { event: 'deploy', ok: true, n: 3 };
    assert.equal(agentOf(await buildOne({ action: 'agent' }, payload)).message, JSON.stringify(payload));
    assert.equal(wakeOf(await buildOne({ action: 'wake' }, { text: 42 })).text, '{"text":42}');
  });
});

describe('buildMappedRequest: matching and presets', () => {
  it('refuses an unmatched name with hook_not_found', async () => {
    const error = await assertRejects(build({ mappings: [{ match: { path: 'a' } }] }, call('b', {})), 'hook_not_found');
    assert.equal(error.status, 404);
  });

  it('checks the gmail payload shape before anything else, naming messages', async () => {
    await assertRejects(
      build({ presets: ['gmail'] }, call('gmail', { note: 'no messages' })),
      'invalid_payload',
      'messages',
    );
  });

  it("builds one gmail run per message, each in its message id's session", async () => {
    const payload = {
      messages: [
        { id: 'abc123', from: 'Ana <ana@example.com>', subject: 'Hello', snippet: 'Short', body: 'Long body' },
        { id: 'def456', from: 'Bo <bo@example.com>', subject: 'Again', snippet: 'More', body: 'Second body' },
      ],
    };
    const built = await build(
      { presets: ['gmail'], gmail: { model: 'echo/mail', thinking: 'low' } },
      call('gmail', payload),
    );
    assert.equal(built.kind, 'many');
    if (built.kind !== 'many') return;
    assert.deepEqual(
      built.items.map((i) => [i.index, i.identity]),
      [
        [0, 'item:abc123'],
        [1, 'item:def456'],
      ],
    );
    const [first, second] = built.items.map((i) => agentOf(i.action));
    assert.equal(first!.name, 'Gmail');
    assert.equal(first!.sessionKey, 'hook:gmail:abc123');
    assert.equal(second!.sessionKey, 'hook:gmail:def456');
    assert.equal(first!.model, 'echo/mail');
    assert.equal(first!.thinking, 'low');
    for (const part of ['Ana <ana@example.com>', 'Hello', 'Short', 'Long body'])
      assert.ok(first!.message.includes(part), part);
    assert.ok(second!.message.includes('Second body'));
    assert.ok(!first!.message.includes('Second body'), 'each run carries its own message');
  });
});

describe('buildMappedRequest: forEach', () => {
  const each = (forEach: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    mappings: [
      {
        match: { path: 'batch' },
        action: 'wake',
        textTemplate: 'Order {{item.id}} of {{payload.shop}}',
        forEach,
        ...extra,
      },
    ],
  });

  it('builds one action per item with item and payload in the templates', async () => {
    const built = await build(
      each({ path: 'orders' }),
      call('batch', { shop: 'north', orders: [{ id: 1 }, { id: 2 }, { id: 3 }] }),
    );
    assert.equal(built.kind, 'many');
    if (built.kind !== 'many') return;
    assert.deepEqual(
      built.items.map((i) => wakeOf(i.action).text),
      ['Order 1 of north', 'Order 2 of north', 'Order 3 of north'],
    );
    assert.deepEqual(
      built.items.map((i) => i.identity),
      [null, null, null],
      'no idPath: identity comes from the request key',
    );
  });

  it('refuses more items than maxItems, and a path that is not an array', async () => {
    const tooMany = await assertRejects(
      build(each({ path: 'orders', maxItems: 2 }), call('batch', { orders: [1, 2, 3] })),
      'too_many_items',
    );
    assert.match(tooMany.message, /orders has 3 items; mapping "mappings\[0\]" takes at most 2/);
    await assertRejects(
      build(each({ path: 'orders' }), call('batch', { orders: { id: 1 } })),
      'invalid_payload',
      'orders',
    );
  });

  it("takes each item's identity from idPath", async () => {
    const built = await build(
      each({ path: 'orders', idPath: 'ref' }),
      call('batch', { orders: [{ id: 1, ref: 'A-1' }, { id: 2, ref: 7 }, { id: 3 }] }),
    );
    assert.equal(built.kind, 'many');
    if (built.kind !== 'many') return;
    assert.deepEqual(
      built.items.map((i) => i.identity),
      ['item:A-1', 'item:7', null],
    );
  });

  it('refuses items whose actions together pass MAX_ACTIONS_CHARS: a large common part named in the template is written once per item', async () => {
    const mapping = each({ path: 'orders', maxItems: 1000 }, { textTemplate: '{{item.id}}: {{payload.notes}}' });
    const notes = 'n'.repeat(200 * 1024);
    const orders = Array.from({ length: 11 }, (_, i) => ({ id: i }));
    const refused = await assertRejects(build(mapping, call('batch', { notes, orders })), 'actions_too_large');
    assert.match(refused.message, /The 11 items of orders make actions of more than 2097152 characters/);
    // Ten fit.
    const built = await build(mapping, call('batch', { notes, orders: orders.slice(0, 10) }));
    assert.equal(built.kind === 'many' ? built.items.length : 0, 10);
    assert.equal(MAX_ACTIONS_CHARS, 2 * 1024 * 1024);
  });

  it('is a skip when the array is empty', async () => {
    assert.equal((await build(each({ path: 'orders' }), call('batch', { orders: [] }))).kind, 'skip');
  });
});

describe('buildMappedRequest: transforms', () => {
  const withTransform = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    action: 'agent',
    messageTemplate: 'templated {{n}}',
    name: 'Templated',
    transform: { module: 'shape.js' },
    ...extra,
  });

  it('calls the transform with payload, credential-free headers, url and path', async () => {
    const { run, calls } = fakeRunner(undefined);
    const payload = { n: 1 };
    await buildOne(
      withTransform({ transform: { module: 'sub/shape.ts', export: 'toAction', timeoutMs: 321, maxMemoryMb: 64 } }),
      payload,
      run,
      {
        headers: { authorization: 'Bearer s3cret', 'x-hookgate-token': 's3cret', 'x-github-event': 'push' },
        url: '/hooks/m?x=1',
      },
    );
    assert.equal(calls.length, 1);
    assert.deepEqual(
      { ...calls[0]?.spec, key: undefined },
      {
        key: undefined,
        file: join(DIR, 'sub', 'shape.ts'),
        exportName: 'toAction',
        timeoutMs: 321,
        maxMemoryMb: 64,
        maxResultBytes: 256 * 1024,
        env: {},
      },
    );
    assert.deepEqual(calls[0]?.input, {
      payload,
      headers: { 'x-github-event': 'push' },
      url: '/hooks/m?x=1',
      path: 'm',
    });
  });

  it('skips the hook when the transform returns null', async () => {
    assert.deepEqual(await buildOne(withTransform(), { n: 1 }, fakeRunner(null).run), { kind: 'skip' });
  });

  it('keeps the template-built action when the transform returns nothing', async () => {
    const request = agentOf(await buildOne(withTransform(), { n: 1 }, fakeRunner(undefined).run));
    assert.equal(request.message, 'templated 1');
    assert.equal(request.name, 'Templated');
  });

  it('overrides only the fields the transform returns', async () => {
    const request = agentOf(
      await buildOne(
        withTransform({ deliver: false }),
        { n: 1 },
        fakeRunner({ message: 'from transform', sessionKey: 'hook:t:1' }).run,
      ),
    );
    assert.equal(request.message, 'from transform');
    assert.equal(request.sessionKey, 'hook:t:1');
    assert.equal(request.sessionKeyOrigin, 'mapping');
    assert.equal(request.name, 'Templated');
    assert.equal(request.deliver, false);
  });

  it('switches an agent mapping to a wake', async () => {
    const wake = wakeOf(
      await buildOne(
        withTransform(),
        { n: 1 },
        fakeRunner({ action: 'wake', text: 'wake instead', mode: 'next-heartbeat' }).run,
      ),
    );
    assert.equal(wake.text, 'wake instead');
    assert.equal(wake.mode, 'next-heartbeat');
  });

  it('reads the action from kind, as OpenClaw transforms return it', async () => {
    const wake = wakeOf(await buildOne(withTransform(), { n: 1 }, fakeRunner({ kind: 'wake', text: 'kind wake' }).run));
    assert.equal(wake.text, 'kind wake');
  });

  it('lets action win over kind when a transform returns both', async () => {
    const request = agentOf(
      await buildOne(withTransform(), { n: 1 }, fakeRunner({ kind: 'wake', action: 'agent', message: 'both' }).run),
    );
    assert.equal(request.message, 'both');
  });

  it('refuses a kind other than wake or agent, naming action', async () => {
    await assertRejects(
      buildOne(withTransform(), { n: 1 }, fakeRunner({ kind: 'email' }).run),
      'invalid_payload',
      'action',
    );
  });

  it('lets a transform override the wake mode set by the mapping', async () => {
    const mapping = { action: 'wake', textTemplate: 'x', wakeMode: 'now', transform: { module: 'shape.js' } };
    assert.equal(
      wakeOf(await buildOne(mapping, {}, fakeRunner({ mode: 'next-heartbeat' }).run)).mode,
      'next-heartbeat',
    );
  });

  it('lets a transform override the wake mode with wakeMode too', async () => {
    const mapping = { action: 'wake', textTemplate: 'x', wakeMode: 'now', transform: { module: 'shape.js' } };
    assert.equal(
      wakeOf(await buildOne(mapping, {}, fakeRunner({ wakeMode: 'next-heartbeat' }).run)).mode,
      'next-heartbeat',
    );
  });

  it('switches a wake mapping to an agent run', async () => {
    const mapping = { action: 'wake', textTemplate: 'wake {{n}}', transform: { module: 'shape.js' } };
    const request = agentOf(
      await buildOne(mapping, { n: 1 }, fakeRunner({ action: 'agent', message: 'run instead' }).run),
    );
    assert.equal(request.message, 'run instead');
  });

  it('ignores keys a transform may not set (source, unsafe flag, session key origin)', async () => {
    const request = agentOf(
      await buildOne(
        withTransform(),
        { n: 1 },
        fakeRunner({
          allowUnsafeExternalContent: true,
          source: { hook: 'forged', external: false, allowUnsafeExternalContent: true },
          sessionKeyOrigin: 'request',
        }).run,
      ),
    );
    assert.deepEqual(request.source, { hook: 'm', external: true, allowUnsafeExternalContent: false });
    assert.equal(request.sessionKeyOrigin, 'mapping');
  });

  it('validates what the transform returns like a payload (channel enum)', async () => {
    await assertRejects(
      buildOne(withTransform(), { n: 1 }, fakeRunner({ channel: 'fax' }).run),
      'invalid_payload',
      'channel',
    );
  });

  it('refuses an action other than wake or agent', async () => {
    await assertRejects(
      buildOne(withTransform(), { n: 1 }, fakeRunner({ action: 'email' }).run),
      'invalid_payload',
      'action',
    );
  });

  it('turns a throwing transform into transform_failed (500) with the error as cause', async () => {
    const boom = new Error('kaboom');
    const error = await assertRejects(
      buildOne(withTransform(), { n: 1 }, () => Promise.reject(boom)),
      'transform_failed',
    );
    assert.equal(error.status, 500);
    assert.equal(error.cause, boom);
    assert.ok(!error.message.includes('kaboom'), 'the public message is generic');
  });

  const unusable: Array<[string, unknown]> = [
    ['a string', 'message'],
    ['an array', [{ message: 'x' }]],
    ['a number', 7],
    ['true', true],
  ];
  for (const [what, value] of unusable) {
    it(`turns a transform returning ${what} into transform_failed`, async () => {
      const error = await assertRejects(buildOne(withTransform(), { n: 1 }, fakeRunner(value).run), 'transform_failed');
      assert.equal(error.status, 500);
    });
  }
});

describe('buildMappedRequest: authentication by signature', () => {
  const mappings = {
    mappings: [
      { id: 'signed', match: { path: 'in', source: 'a' }, action: 'wake', verify: { kind: 'github', secret: 'x' } },
      { id: 'other', match: { path: 'in', source: 'b' }, action: 'wake' },
      {
        id: 'strict',
        match: { path: 'strict' },
        action: 'wake',
        verify: { kind: 'github', secret: 'x', required: true },
      },
    ],
  };
  const signed = (name: string, payload: Record<string, unknown>, ids: string[]): MappedHookCall => ({
    ...call(name, payload),
    signedBy: { mappingIds: ids },
  });

  it('lets the mapping whose key verified the request serve it', async () => {
    assert.equal(wakeOf(await build(mappings, signed('in', { source: 'a', text: 'x' }, ['signed']))).text, 'x');
  });

  it('refuses a signed request that resolves to a mapping whose key did not verify it', async () => {
    await assertRejects(build(mappings, signed('in', { source: 'b', text: 'x' }, ['signed'])), 'signature_invalid');
  });

  it('refuses the hook token alone for a mapping with verify.required', async () => {
    await assertRejects(build(mappings, call('strict', { text: 'x' })), 'signature_invalid');
    assert.equal(wakeOf(await build(mappings, signed('strict', { text: 'x' }, ['strict']))).text, 'x');
  });

  it('accepts the hook token for a mapping whose verify is not required', async () => {
    assert.equal(wakeOf(await build(mappings, call('in', { source: 'a', text: 'x' }))).text, 'x');
  });
});
