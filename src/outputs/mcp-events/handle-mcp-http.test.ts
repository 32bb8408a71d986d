import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMcpHttpHandler, type McpHttpCall } from './handle-mcp-http.js';
import { invalidParam } from './mcp-error.js';

const failures: unknown[] = [];
const handle = createMcpHttpHandler(
  {
    ping: async () => ({}),
    echo: async (params, ctx) => ({ params, version: ctx.protocolVersion }),
    refuse: async () => {
      throw invalidParam('name', 'must be a non-empty string');
    },
    crash: async () => {
      throw new Error('boom: internal detail');
    },
  },
  (_, error) => failures.push(error),
);

const call = (body: unknown, o: Partial<McpHttpCall> = {}): Promise<{ status: number; json: unknown }> =>
  handle({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...o.headers },
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    ...(o.method === undefined ? {} : { method: o.method }),
  }).then((a) => ({ status: a.status, json: a.body === '' ? undefined : (JSON.parse(a.body) as unknown) }));

const errorOf = (json: unknown) => (json as { id: unknown; error: { code: number; message: string } }).error;

describe('MCP JSON-RPC layer', () => {
  it('answers a request with its id, its result and resultType complete', async () => {
    const r = await call({ jsonrpc: '2.0', id: 'a1', method: 'ping' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 'a1', result: { resultType: 'complete' } });
  });

  const refusals: Array<[string, unknown, number, number, RegExp]> = [
    ['a body that is not JSON', '{"jsonrpc"', 400, -32700, /not valid JSON/],
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], 400, -32600, /batches/],
    ['a body nested 10,000 deep', `${'['.repeat(10_000)}${']'.repeat(10_000)}`, 400, -32600, /levels deep/],
    ['a body that is not an object', '"ping"', 400, -32600, /JSON object/],
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 1, method: 'ping' }, 400, -32600, /jsonrpc must be "2.0"/],
    ['a method that is not a string', { jsonrpc: '2.0', id: 1, method: 7 }, 400, -32600, /method/],
    ['an id that is neither a string nor an integer', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, 400, -32600, /id/],
    ['a message with no method', { jsonrpc: '2.0', id: 1 }, 400, -32600, /needs a method/],
    ['an unknown method', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 200, -32601, /tools\/list/],
    ['params that are not an object', { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }, 200, -32602, /params/],
    ['a refusal of the method', { jsonrpc: '2.0', id: 1, method: 'refuse' }, 200, -32602, /name must be/],
    [
      'an unsupported version in _meta',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'ping',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '1999-01-01' } },
      },
      200,
      -32022,
      /1999-01-01/,
    ],
  ];
  for (const [what, body, status, code, message] of refusals) {
    it(`answers ${what} with ${code} and HTTP ${status}`, async () => {
      const r = await call(body);
      assert.equal(r.status, status);
      assert.equal(errorOf(r.json).code, code);
      assert.match(errorOf(r.json).message, message);
    });
  }

  it('answers a method that throws with -32603 and no detail, and reports the error', async () => {
    const r = await call({ jsonrpc: '2.0', id: 3, method: 'crash' });
    assert.equal(r.status, 200);
    assert.deepEqual(errorOf(r.json), { code: -32603, message: 'Internal error.' });
    assert.equal((failures.at(-1) as Error).message, 'boom: internal detail');
  });

  it('takes notifications and client responses with 202 and no body', async () => {
    assert.deepEqual(await call({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
      status: 202,
      json: undefined,
    });
    assert.deepEqual(await call({ jsonrpc: '2.0', id: 9, result: {} }), { status: 202, json: undefined });
  });

  it('refuses an unsupported protocol version header with -32022 naming the versions it speaks', async () => {
    const r = await call(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { headers: { 'mcp-protocol-version': '2099-01-01' } },
    );
    assert.equal(r.status, 400);
    const e = errorOf(r.json) as { code: number; data?: { supported: string[] } };
    assert.equal(e.code, -32022);
    assert.ok(e.data?.supported.includes('2026-07-28'));
  });

  it('hands a method the protocol version of the header', async () => {
    const r = await call(
      { jsonrpc: '2.0', id: 1, method: 'echo' },
      { headers: { 'mcp-protocol-version': '2025-06-18' } },
    );
    assert.equal((r.json as { result: { version: string } }).result.version, '2025-06-18');
  });

  it('refuses an Mcp-Method header that is not the body method', async () => {
    const r = await call({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { 'mcp-method': 'events/list' } });
    assert.equal(r.status, 400);
    assert.equal(errorOf(r.json).code, -32600);
  });

  it('refuses other HTTP methods with 405 and other content types with 415, in the gateway error shape', async () => {
    const get = await call('', { method: 'GET' });
    assert.equal(get.status, 405);
    assert.equal((get.json as { code: string }).code, 'method_not_allowed');
    const text = await call({ jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { 'content-type': 'text/plain' } });
    assert.equal(text.status, 415);
    assert.equal((text.json as { ok: boolean }).ok, false);
  });
});
