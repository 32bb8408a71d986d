/**
 * The request handler's bounds, over loopback HTTP with a stand-in hook handler: a store that
 * cannot write answers 503 `store_unavailable` and logs once per interval; bodies read at once per
 * client are capped; deep JSON is refused before parsing.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createAuthLimiter, createSignatureGate, createTokenVerifier, groupAuthLimiter } from '../auth/index.js';
import { createLog, type LogLevel } from '../common/log.js';
import { HooksSchema } from '../config/index.js';
import type { HookHandler } from '../hooks/index.js';
import { createAccessLog, SHED_LINES_PER_INTERVAL } from './access-log.js';
import { createHttpServer, type HttpServer } from './create-http-server.js';
import { addressGroup } from './create-peer-grouper.js';
import { newRun } from '../../test/helpers/store-records.js';
import type { ObservedRequest } from './request-observer.js';
import {
  createRequestHandler,
  type IngressSettings,
  type RequestHandler,
  type RequestHandlerDeps,
} from './create-request-handler.js';
import { createClientAddressResolver } from './resolve-client-address.js';

const TOKEN = 'handler-test-token';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: { ok?: boolean; code?: string } | undefined;
}

/**
 * POSTs to the handler's server; `hold` keeps the body unfinished until it resolves; `from` is sent
 * as `X-Forwarded-For` (the client address where loopback is a trusted proxy); `token` replaces the
 * hook token.
 */
function post(
  port: number,
  path: string,
  body: string,
  hold?: Promise<void>,
  from?: string,
  token = TOKEN,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    if (from !== undefined) headers['x-forwarded-for'] = from;
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          json: text === '' ? undefined : JSON.parse(text),
        }),
      );
    });
    req.on('error', reject);
    if (hold === undefined) {
      req.end(body);
      return;
    }
    req.write(body.slice(0, 1));
    void hold.then(() => req.end(body.slice(1)));
  });
}

/** A handler over loopback with test settings; `extra` adds request-handler deps (an observer, metrics). */
function testHandler(o: {
  hooks: Record<string, unknown>;
  handleHook: IngressSettings['handleHook'];
  now: number;
  level: LogLevel;
  lines: Array<Record<string, unknown>>;
  extra?: Partial<RequestHandlerDeps>;
  waitForRun?: IngressSettings['waitForRun'];
}): RequestHandler {
  const settings: IngressSettings = {
    hooks: HooksSchema.parse({ enabled: true, token: TOKEN, ...o.hooks }),
    bodyTimeoutMs: 10_000,
    verifyToken: createTokenVerifier(TOKEN),
    signatures: createSignatureGate([]),
    waitForRun: o.waitForRun ?? (() => Promise.reject(new Error('no run is waited for here'))),
    handleHook: o.handleHook,
  };
  return createRequestHandler({
    settings: () => settings,
    limiter: createAuthLimiter({ maxFailures: 20, windowSeconds: 60, lockoutSeconds: 60, maxClients: 100 }),
    clientAddress: createClientAddressResolver([]),
    clock: { now: () => o.now, sleep: async () => undefined },
    log: createLog({ level: o.level, write: (l) => o.lines.push(JSON.parse(l) as Record<string, unknown>) }),
    isReady: () => true,
    ...o.extra,
  });
}

/**
 * Serves `testHandler(o)` over loopback for the enclosing `describe`: `port()` once it listens;
 * `hold()` is a promise a held body waits on until `release()`, which also runs after each test.
 */
function serveForSuite(o: Parameters<typeof testHandler>[0]): {
  port: () => number;
  hold: () => Promise<void>;
  release: () => void;
} {
  let server: HttpServer | undefined;
  let port = 0;
  let held: Array<() => void> = [];
  before(async () => {
    server = createHttpServer(testHandler(o), { bodyTimeoutMs: 10_000 });
    port = await server.listen(0, '127.0.0.1');
  });
  const release = (): void => {
    for (const r of held) r();
    held = [];
  };
  afterEach(release);
  after(async () => {
    await server?.close();
  });
  return { port: () => port, hold: () => new Promise<void>((resolve) => held.push(resolve)), release };
}

describe('createRequestHandler bounds', () => {
  let dir: string;
  const logLines: Array<Record<string, unknown>> = [];
  let handleHook: HookHandler = async () => ({ kind: 'skip' });
  const served = serveForSuite({
    hooks: { maxBodiesPerClient: 2 },
    handleHook: (call) => handleHook(call),
    // A clock that never moves: every outage line after the first falls in the same interval.
    now: 1_000_000,
    level: 'debug',
    lines: logLines,
  });
  let port: number;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-handler-'));
    port = served.port();
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 store_unavailable with Retry-After while SQLite is locked by another connection, logging once', async () => {
    const path = join(dir, 'locked.db');
    const holder = new Database(path);
    holder.pragma('journal_mode = WAL');
    holder.exec('CREATE TABLE events (id INTEGER PRIMARY KEY, text TEXT)');
    const writer = new Database(path, { timeout: 0 });
    const insert = writer.prepare('INSERT INTO events (text) VALUES (?)');
    handleHook = async (call) => {
      insert.run(String(call.payload['text']));
      return { kind: 'skip' };
    };
    holder.exec('BEGIN IMMEDIATE');
    const before = logLines.length;
    try {
      for (let i = 0; i < 20; i++) {
        const res = await post(port, '/hooks/wake', JSON.stringify({ text: `event ${i}` }));
        assert.equal(res.status, 503);
        assert.equal(res.json?.code, 'store_unavailable');
        assert.equal(res.headers['retry-after'], '5');
      }
    } finally {
      holder.exec('ROLLBACK');
    }
    const outage = logLines.slice(before).filter((l) => l['level'] === 50);
    assert.equal(outage.length, 1, JSON.stringify(outage));
    assert.equal(outage[0]!['code'], 'SQLITE_BUSY');
    assert.equal(outage[0]!['stack'], undefined);
    // The lock is gone: the same write goes through.
    assert.equal((await post(port, '/hooks/wake', JSON.stringify({ text: 'after' }))).status, 204);
    holder.close();
    writer.close();
  });

  it('answers 503 store_unavailable when PostgreSQL is shutting down', async () => {
    handleHook = async () => {
      const e = new pg.DatabaseError('terminating connection due to administrator command', 60, 'error');
      e.code = '57P01';
      throw e;
    };
    const res = await post(port, '/hooks/agent', JSON.stringify({ message: 'hello' }));
    assert.equal(res.status, 503);
    assert.equal(res.json?.code, 'store_unavailable');
  });

  it('still answers 500 internal_error for a failure that is not the store being unavailable', async () => {
    handleHook = async () => {
      throw new Database.SqliteError('UNIQUE constraint failed: events.id', 'SQLITE_CONSTRAINT_PRIMARYKEY');
    };
    const res = await post(port, '/hooks/wake', JSON.stringify({ text: 'x' }));
    assert.equal(res.status, 500);
    assert.equal(res.json?.code, 'internal_error');
  });

  it('answers 429 too_many_bodies to a client reading more bodies at once than maxBodiesPerClient', async () => {
    handleHook = async () => ({ kind: 'skip' });
    const release = served.hold();
    const slow = [
      post(port, '/hooks/wake', '{"text":"slow 1"}', release),
      post(port, '/hooks/wake', '{"text":"slow 2"}', release),
    ];
    // Both slow bodies are being read once the server has answered something after them.
    let third: Answer | undefined;
    for (let i = 0; i < 100 && third?.status !== 429; i++) {
      third = await post(port, '/hooks/wake', '{"text":"third"}');
      if (third.status !== 429) assert.equal(third.status, 204, 'answered normally until the slow two are being read');
    }
    assert.ok(third !== undefined);
    assert.equal(third.status, 429);
    assert.equal(third.json?.code, 'too_many_bodies');
    assert.equal(third.headers['retry-after'], '1');
    served.release();
    for (const res of await Promise.all(slow)) assert.equal(res.status, 204);
    assert.equal((await post(port, '/hooks/wake', '{"text":"fourth"}')).status, 204);
  });

  it('refuses JSON nested 5,000 levels deep with 400 json_too_deep before the hook sees it', async () => {
    let called = false;
    handleHook = async () => {
      called = true;
      return { kind: 'skip' };
    };
    const res = await post(port, '/hooks/wake', `{"text":"x","deep":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    assert.equal(res.status, 400);
    assert.equal(res.json?.code, 'json_too_deep');
    assert.equal(called, false);
  });
});

describe('createRequestHandler: a caller waiting for its run', () => {
  const waits: AbortSignal[] = [];
  const served = serveForSuite({
    hooks: {},
    handleHook: async () => ({
      kind: 'agent',
      run: newRun('hook:agent'),
      wait: { timeoutMs: 60_000, returnReply: false },
    }),
    now: 1_000_000,
    level: 'error',
    lines: [],
    waitForRun: (runId, _timeoutMs, signal) => {
      waits.push(signal!);
      return new Promise((resolve) =>
        signal!.addEventListener('abort', () =>
          resolve({ runId, status: 'queued', delivered: false, error: 'wait_timeout', reply: null, held: null }),
        ),
      );
    },
  });

  it('ends the wait when the caller leaves before the answer', async () => {
    const req = request({
      host: '127.0.0.1',
      port: served.port(),
      path: '/hooks/agent',
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end('{"message":"m","waitForCompletion":true}');
    for (let i = 0; i < 200 && waits.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(waits.length, 1, 'the wait started');
    assert.equal(waits[0]!.aborted, false);
    req.destroy();
    for (let i = 0; i < 200 && !waits[0]!.aborted; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(waits[0]!.aborted, true, 'the wait was told the caller left');
  });
});

describe('createRequestHandler: an IPv6 client is its /64', () => {
  const served = serveForSuite({
    hooks: { maxBodiesPerClient: 2 },
    handleHook: async () => ({ kind: 'skip' }),
    now: 1_000_000,
    level: 'error',
    lines: [],
    extra: {
      // Loopback is the trusted proxy, so each request's client is its X-Forwarded-For.
      clientAddress: createClientAddressResolver(['127.0.0.1']),
      limiter: groupAuthLimiter(
        createAuthLimiter({ maxFailures: 3, windowSeconds: 60, lockoutSeconds: 60, maxClients: 100 }),
        addressGroup,
      ),
    },
  });
  let port: number;
  before(() => {
    port = served.port();
  });

  it('counts the bodies being read by every address of one /64 together, and another /64 apart', async () => {
    const release = served.hold();
    const slow = [
      post(port, '/hooks/wake', '{"text":"slow 1"}', release, '2001:db8:1:2::a'),
      post(port, '/hooks/wake', '{"text":"slow 2"}', release, '2001:db8:1:2:ffff:1:2:3'),
    ];
    let third: Answer | undefined;
    for (let i = 0; i < 100 && third?.status !== 429; i++) {
      third = await post(port, '/hooks/wake', '{"text":"third"}', undefined, '2001:0db8:0001:0002::c');
      if (third.status !== 429) assert.equal(third.status, 204, 'answered normally until the slow two are being read');
    }
    assert.equal(third?.status, 429);
    assert.equal(third?.json?.code, 'too_many_bodies');
    // The next /64, and an IPv4 client, are other clients.
    assert.equal((await post(port, '/hooks/wake', '{"text":"next block"}', undefined, '2001:db8:1:3::a')).status, 204);
    assert.equal((await post(port, '/hooks/wake', '{"text":"v4"}', undefined, '203.0.113.7')).status, 204);
    served.release();
    for (const res of await Promise.all(slow)) assert.equal(res.status, 204);
  });

  it('locks out the whole /64 when its addresses together reach the failure limit, and no other client', async () => {
    for (const from of ['2001:db8:9:9::1', '2001:db8:9:9::2']) {
      assert.equal((await post(port, '/hooks/wake', '{"text":"x"}', undefined, from, 'wrong-token')).status, 401);
    }
    const third = await post(port, '/hooks/wake', '{"text":"x"}', undefined, '2001:db8:9:9:abcd::3', 'wrong-token');
    assert.equal(third.status, 401);
    // The lockout now answers every address of the block, even with the right token.
    const locked = await post(port, '/hooks/wake', '{"text":"x"}', undefined, '2001:db8:9:9::4');
    assert.equal(locked.status, 429);
    assert.equal(locked.json?.code, 'rate_limited');
    assert.equal((await post(port, '/hooks/wake', '{"text":"x"}', undefined, '2001:db8:9:a::4')).status, 204);
  });
});

describe('createRequestHandler: what follows a request', () => {
  it('hands the request log, the access line and metrics the same outcome once the response closes', async () => {
    const seen: string[] = [];
    const answered: Array<[string | null, number | null]> = [];
    const lines: Array<Record<string, unknown>> = [];
    const handler = testHandler({
      hooks: {},
      handleHook: async (_call, ingress) => {
        seen.push(`ingress ${ingress === undefined ? 'none' : 'given'}`);
        return { kind: 'skip' };
      },
      now: 1_000,
      level: 'info',
      lines,
      extra: {
        observer: {
          begin: (r) => {
            seen.push(`begin ${r.hook}`);
            const ingress = {} as ReturnType<ObservedRequest['ingress']>;
            return {
              id: 'r1',
              noteBody: (raw) => seen.push(`body ${raw.length}`),
              noteError: (e) => seen.push(`error ${(e as { code?: string }).code}`),
              ingress: () => ingress,
              end: (status) => seen.push(`end ${status}`),
            };
          },
        },
        onAnswered: (hook, status) => answered.push([hook, status]),
      },
    });
    const http = createHttpServer(handler, { bodyTimeoutMs: 10_000 });
    const port = await http.listen(0, '127.0.0.1');
    try {
      assert.equal((await post(port, '/hooks/wake', '{"text":"hi"}')).status, 204);
      const wrong = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/hooks/wake',
            method: 'POST',
            agent: false,
            headers: { authorization: 'Bearer wrong' },
          },
          (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)),
        );
        req.on('error', reject);
        req.end('{}');
      });
      assert.equal(wrong, 401);
      // The close listener runs after the client has its answer: wait for both records.
      for (let i = 0; i < 100 && answered.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await http.close();
    }
    assert.deepEqual(seen, [
      'begin wake',
      'body 13',
      'ingress given',
      'end 204',
      'begin wake',
      'error unauthorized',
      'end 401',
    ]);
    assert.deepEqual(answered, [
      ['wake', 204],
      ['wake', 401],
    ]);
    assert.deepEqual(
      lines.filter((l) => l['msg'] === 'hook request').map((l) => [l['status'], l['code']]),
      [
        [204, null],
        [401, 'unauthorized'],
      ],
    );
  });
});

describe('createRequestHandler: a very long path', () => {
  const lines: Array<Record<string, unknown>> = [];
  const begun: Array<{ path: string; hook: string | null }> = [];
  const served = serveForSuite({
    hooks: {},
    handleHook: async () => ({ kind: 'skip' }),
    now: 1_000,
    level: 'info',
    lines,
    extra: {
      observer: {
        begin: (r) => {
          begun.push({ path: r.path, hook: r.hook });
          return {
            id: 'r1',
            noteBody: () => undefined,
            noteError: () => undefined,
            ingress: () => ({}) as ReturnType<ObservedRequest['ingress']>,
            end: () => undefined,
          };
        },
      },
    },
  });

  it('keeps 1,024 characters of the path and the hook name in the access line and the request log', async () => {
    const name = 'n'.repeat(12_000);
    assert.equal((await post(served.port(), `/hooks/${name}?x=1`, '{}', undefined, undefined, 'wrong')).status, 401);
    for (let i = 0; i < 100 && !lines.some((l) => l['msg'] === 'hook request'); i++)
      await new Promise((r) => setTimeout(r, 10));
    const access = lines.find((l) => l['msg'] === 'hook request')!;
    assert.equal(access['path'], `/hooks/${'n'.repeat(1024 - '/hooks/'.length)}…`);
    assert.equal(access['hook'], `${'n'.repeat(1024)}…`);
    assert.deepEqual(begun, [{ path: access['path'], hook: access['hook'] }]);
  });
});

describe('createRequestHandler: access lines while load is shed', () => {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLog({ level: 'info', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const access = createAccessLog(log, { now: () => 1_000 });
  const served = serveForSuite({
    hooks: {},
    handleHook: async () => {
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    },
    now: 1_000,
    level: 'info',
    lines: [],
    extra: { log, access },
  });

  it('writes a few lines of the 503s a full disk answers and counts the rest in one line', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await post(served.port(), '/hooks/wake', '{"text":"x"}')).status);
    assert.deepEqual(new Set(statuses), new Set([503]));
    for (let i = 0; i < 100 && lines.filter((l) => l['msg'] === 'hook request').length < SHED_LINES_PER_INTERVAL; i++)
      await new Promise((r) => setTimeout(r, 10));
    access.flush();
    const accessLines = lines.filter((l) => l['msg'] === 'hook request');
    assert.equal(accessLines.length, SHED_LINES_PER_INTERVAL);
    assert.ok(accessLines.every((l) => l['status'] === 503 && l['code'] === 'store_unavailable'));
    const held = lines.filter((l) => l['heldBack'] !== undefined);
    assert.deepEqual(
      held.map((l) => [l['heldBack'], l['codes']]),
      [[40 - SHED_LINES_PER_INTERVAL, { store_unavailable: 40 - SHED_LINES_PER_INTERVAL }]],
    );
  });
});
