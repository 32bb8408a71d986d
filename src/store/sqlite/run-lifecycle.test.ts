import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIds } from '../../common/ids.js';
import type { Store } from '../store.js';
import type { NewRun, NewSystemEvent, RunCompletion, RunRecord } from '../types.js';
import { createSqliteStore } from './create-sqlite-store.js';

const ids = createIds();
const source = { hook: 'agent', external: true, allowUnsafeExternalContent: false };
const run = (sessionKey: string, message = 'm'): NewRun => ({
  id: ids.next(), agentId: 'main', sessionKey, message, name: 'agent', wakeMode: 'now', deliver: true,
  channel: 'last', to: null, model: null, thinking: null, timeoutSeconds: 30, source, createdAt: 1,
});
const summary = (text: string): NewSystemEvent => ({
  id: ids.next(), agentId: 'main', sessionKey: 'agent:main:main', text, mode: 'now', source, createdAt: 5,
});
const completion = (r: RunRecord, owner = 'w1'): RunCompletion => ({
  runId: r.id, owner, attempt: r.attempts, state: 'succeeded', finishedAt: 10, model: 'echo/echo', reply: 'done',
  error: null,
  transcript: [
    { sessionKey: r.sessionKey, role: 'user', content: r.message, turnId: r.id, createdAt: 10 },
    { sessionKey: r.sessionKey, role: 'assistant', content: 'done', turnId: r.id, createdAt: 10 },
  ],
  summary: summary(`Hook agent: done`),
  delivery: { id: ids.next(), agentId: 'main', channel: 'last', to: null, text: 'done', runId: r.id, createdAt: 10 },
});

describe('SQLite store: run lifecycle', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-runs-'));
    store = createSqliteStore({ path: join(dir, 'h.db') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('claims oldest first, one run per session key at a time', async () => {
    const a1 = run('a'); const a2 = run('a'); const b1 = run('b');
    for (const r of [a1, a2, b1]) await store.enqueueRun(r);
    const first = await store.claimRuns({ owner: 'w1', limit: 10, leaseMs: 1000, now: 100 });
    assert.deepEqual(first.map((r) => r.id), [a1.id, b1.id]);
    assert.equal(first[0]!.state, 'running');
    assert.equal(first[0]!.attempts, 1);
    assert.equal(first[0]!.leaseUntil, 1100);
    assert.deepEqual(await store.claimRuns({ owner: 'w1', limit: 10, leaseMs: 1000, now: 100 }), [], 'a2 waits for a1');
    assert.equal(await store.completeRun(completion(first[0]!)), true);
    const next = await store.claimRuns({ owner: 'w1', limit: 10, leaseMs: 1000, now: 200 });
    assert.deepEqual(next.map((r) => r.id), [a2.id]);
  });

  it('finishes a run once, with transcript, summary and delivery in the same commit', async () => {
    await store.enqueueRun(run('s'));
    const [claimed] = await store.claimRuns({ owner: 'w1', limit: 1, leaseMs: 1000, now: 1 });
    const c = completion(claimed!);
    assert.equal(await store.completeRun(c), true);
    assert.equal(await store.completeRun(c), false, 'a second finish is refused');
    const got = await store.getRun(claimed!.id);
    assert.equal(got?.state, 'succeeded');
    assert.equal(got?.reply, 'done');
    assert.equal(got?.modelUsed, 'echo/echo');
    assert.equal(got?.leaseOwner, null);
    assert.deepEqual((await store.readTranscript('s')).map((t) => t.role), ['user', 'assistant']);
    assert.deepEqual((await store.listPendingEvents('agent:main:main')).map((e) => e.text), ['Hook agent: done']);
    const deliveries = await store.listDeliveries();
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0]!.state, 'pending');
  });

  it('refuses a completion from a stale claim', async () => {
    await store.enqueueRun(run('s'));
    const [claimed] = await store.claimRuns({ owner: 'w1', limit: 1, leaseMs: 10, now: 1 });
    await store.recoverExpiredRuns(100, 3, (r) => summary(r.id));
    const [again] = await store.claimRuns({ owner: 'w2', limit: 1, leaseMs: 1000, now: 101 });
    assert.equal(again!.attempts, 2);
    assert.equal(await store.completeRun(completion(claimed!, 'w1')), false);
    assert.equal(await store.completeRun(completion(again!, 'w2')), true);
    assert.equal((await store.listPendingEvents('agent:main:main')).length, 1, 'one summary only');
  });

  it('requeues expired leases, then fails them as interrupted after maxAttempts, posting one summary', async () => {
    const r = run('s');
    await store.enqueueRun(r);
    for (let attempt = 1; attempt <= 2; attempt++) {
      await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 10, now: attempt * 100 });
      assert.deepEqual(await store.recoverExpiredRuns(attempt * 100 + 5, 2, (x) => summary(x.id)), { requeued: [], failed: [] }, 'lease still valid');
      const swept = await store.recoverExpiredRuns(attempt * 100 + 50, 2, (x) => summary(`Hook agent (failed): ${x.error}`));
      assert.deepEqual(swept, attempt < 2 ? { requeued: [r.id], failed: [] } : { requeued: [], failed: [r.id] });
    }
    const got = await store.getRun(r.id);
    assert.equal(got?.state, 'failed');
    assert.equal(got?.error, 'interrupted');
    assert.deepEqual((await store.listPendingEvents('agent:main:main')).map((e) => e.text), ['Hook agent (failed): interrupted']);
    assert.deepEqual(await store.recoverExpiredRuns(10_000, 2, (x) => summary(x.id)), { requeued: [], failed: [] });
  });

  it('renews only leases the owner still holds', async () => {
    await store.enqueueRun(run('s'));
    const [c] = await store.claimRuns({ owner: 'w1', limit: 1, leaseMs: 10, now: 0 });
    await store.renewLeases('other', [c!.id], 9999);
    assert.equal((await store.getRun(c!.id))?.leaseUntil, 10);
    await store.renewLeases('w1', [c!.id], 9999);
    assert.equal((await store.getRun(c!.id))?.leaseUntil, 9999);
  });
});

describe('SQLite store: sessions and heartbeats', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-sessions-'));
    store = createSqliteStore({ path: join(dir, 'h.db') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('marks exactly the consumed events with the turn, and keeps later ones pending', async () => {
    const e1 = summary('one'); const e2 = summary('two');
    await store.addSystemEvent(e1);
    await store.addSystemEvent(e2);
    assert.equal(await store.hasPendingNowEvent('agent:main:main'), true);
    assert.equal(await store.hasPendingNowEvent('agent:other:main'), false);
    const pending = await store.listPendingEvents('agent:main:main');
    assert.deepEqual(pending.map((e) => e.id), [e1.id, e2.id]);
    const e3 = summary('three');
    await store.addSystemEvent(e3);
    await store.recordHeartbeatTurn({
      sessionKey: 'agent:main:main', agentId: 'main', consumedEventIds: [e1.id, e2.id], at: 50, delivery: null,
      transcript: [
        { sessionKey: 'agent:main:main', role: 'user', content: 'prompt', turnId: 't1', createdAt: 50 },
        { sessionKey: 'agent:main:main', role: 'assistant', content: 'HEARTBEAT_OK', turnId: 't1', createdAt: 50 },
      ],
    });
    assert.deepEqual((await store.listPendingEvents('agent:main:main')).map((e) => e.id), [e3.id]);
    const session = await store.getSession('agent:main:main');
    assert.equal(session?.transcriptEntries, 2);
    assert.equal(session?.pendingEvents, 1);
    assert.equal(session?.updatedAt, 50);
  });

  it('keeps the last route and lists sessions, including ones that only have events or runs', async () => {
    await store.addSystemEvent(summary('x'));
    await store.enqueueRun(run('hook:abc'));
    await store.setLastRoute('agent:main:main', 'main', 'telegram', '123', 70);
    const main = await store.getSession('agent:main:main');
    assert.equal(main?.lastChannel, 'telegram');
    assert.equal(main?.lastTo, '123');
    const keys = (await store.listSessions()).map((s) => s.key);
    assert.deepEqual(keys, ['agent:main:main', 'hook:abc']);
    assert.equal(await store.getSession('nope'), null);
  });

  it('returns the last N transcript entries oldest first', async () => {
    const entries = [1, 2, 3, 4].map((n) => ({ sessionKey: 's', role: 'user' as const, content: `m${n}`, turnId: 't', createdAt: n }));
    await store.recordHeartbeatTurn({ sessionKey: 's', agentId: 'main', consumedEventIds: [], transcript: entries, delivery: null, at: 5 });
    assert.deepEqual((await store.readTranscript('s', { limit: 2 })).map((t) => t.content), ['m3', 'm4']);
    assert.equal((await store.readTranscript('s')).length, 4);
  });
});
