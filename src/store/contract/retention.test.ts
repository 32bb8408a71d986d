import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../common/log.js';
import { RetentionSchema } from '../../config/index.js';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import {
  MAIN,
  completion,
  newDelivery,
  newEvent,
  newRequestRecord,
  newRun,
  turn,
} from '../../../test/helpers/store-records.js';
import { createPruner, pruneCutoffs } from '../create-pruner.js';
import type { RequestRecord } from '../request-record.js';
import type { Store } from '../store.js';

const DAY = 86_400_000;

const request = (at: number, o: Partial<RequestRecord> = {}): RequestRecord => newRequestRecord({ at, ...o });

describeEachDriver('store contract: retention', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const retention = RetentionSchema.parse({});
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  /** One of everything, finished at the manual clock's now, plus work that must never go. */
  const seed = async () => {
    const t = f.clock.now();
    const consumed = newEvent('old', { createdAt: t });
    const pending = newEvent('still pending', { createdAt: t });
    await store.addSystemEvent(consumed);
    await store.addSystemEvent(pending);
    const hb = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    await store.recordHeartbeatTurn({
      claimId: hb!.claimId,
      sessionKey: MAIN,
      agentId: 'main',
      consumedEventIds: [consumed.id],
      transcript: turn(MAIN, 't', t),
      delivery: null,
      at: t,
    });
    await store.releaseHeartbeat(hb!);
    const finished = newRun('s1');
    const queued = newRun('s2');
    await store.enqueueRun(finished);
    const [c] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
    const done = completion(c!, {
      finishedAt: t,
      transcript: [],
      summary: newEvent('Hook agent: done', { mode: 'next-heartbeat', createdAt: t }),
    });
    await store.completeRun(done);
    await store.enqueueRun(queued);
    const [d] = await store.claimDueDeliveries({ owner: 'w', limit: 1, leaseMs: 1000, now: t });
    await store.recordDeliveryAttempt({
      claimId: d!.claimId,
      deliveryId: d!.id,
      attempt: 1,
      at: t,
      status: 200,
      error: null,
      outcome: 'sent',
      resolvedChannel: 'telegram',
      resolvedTo: '42',
      partsSent: 1,
      nextAttemptAt: null,
      lastRoute: null,
    });
    const pendingDelivery = newDelivery({ createdAt: t });
    await store.addDelivery(pendingDelivery);
    await store.recordActions({
      events: [],
      runs: [],
      idempotency: { hook: 'gh', key: 'k', status: 200, body: '{}', createdAt: t, expiresAt: t + 3 * DAY },
    });
    return { consumed, pending, finished, queued, deliveryId: d!.id, pendingDelivery };
  };

  it('keeps everything inside its window', async () => {
    await seed();
    await f.clock.advance(2 * DAY);
    const counts = await store.prune(pruneCutoffs(retention, f.clock.now()), 100);
    assert.deepEqual(counts, {
      events: 0,
      runs: 0,
      deliveries: 0,
      transcript: 0,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 0,
    });
  });

  it('deletes finished work past its window and never pending or queued work', async () => {
    const s = await seed();
    await f.clock.advance(31 * DAY);
    const cutoffs = pruneCutoffs(retention, f.clock.now());
    assert.deepEqual(await store.countPrunable(cutoffs), {
      events: 1,
      runs: 1,
      deliveries: 1,
      transcript: 2,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 1,
      sessions: 0,
    });
    assert.deepEqual(await store.prune(cutoffs, 100), {
      events: 1,
      runs: 1,
      deliveries: 1,
      transcript: 2,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 1,
      sessions: 0,
    });
    assert.equal(await store.getRun(s.finished.id), null);
    assert.equal((await store.getRun(s.queued.id))?.state, 'queued');
    assert.equal(await store.getDelivery(s.deliveryId), null);
    assert.equal((await store.getDelivery(s.pendingDelivery.id))?.state, 'pending');
    const events = (await store.listSystemEvents({ limit: 100 })).map((e) => e.text).sort();
    assert.deepEqual(events, ['Hook agent: done', 'still pending'], 'pending events stay, whatever their age');
    assert.equal(await store.findIdempotencyKey('gh', 'k'), null);
    assert.deepEqual(await store.countPrunable(cutoffs), {
      events: 0,
      runs: 0,
      deliveries: 0,
      transcript: 0,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 0,
    });
  });

  it("deletes the rows of sessions idle past the transcript's window, never a main session's or one that keeps a route", async () => {
    const t = f.clock.now();
    for (const key of ['hook:a', 'hook:b', 'hook:routed']) {
      await store.enqueueRun(newRun(key));
      const [c] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
      await store.completeRun(completion(c!, { finishedAt: t, transcript: turn(key, key, t), delivery: null }));
    }
    await store.setLastRoute('hook:routed', 'main', 'telegram', '42', t);
    const hb = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    await store.recordHeartbeatTurn({
      claimId: hb!.claimId,
      sessionKey: MAIN,
      agentId: 'main',
      consumedEventIds: [],
      transcript: turn(MAIN, 't', t),
      delivery: null,
      at: t,
    });
    await store.releaseHeartbeat(hb!);
    const keys = async () => (await store.listSessions({ limit: 100 })).map((x) => x.key).sort();
    assert.deepEqual(await keys(), [MAIN, 'hook:a', 'hook:b', 'hook:routed'].sort());
    await f.clock.advance(29 * DAY);
    assert.equal((await store.countPrunable(pruneCutoffs(retention, f.clock.now()))).sessions, 0, 'inside the window');
    await f.clock.advance(2 * DAY);
    const cutoffs = pruneCutoffs(retention, f.clock.now());
    assert.equal((await store.countPrunable(cutoffs)).sessions, 2);
    const counts = await store.prune(cutoffs, 100);
    assert.equal(counts.sessions, 2);
    assert.equal(counts.runs, 3);
    assert.deepEqual(await keys(), [MAIN, 'hook:routed'].sort());
    assert.deepEqual(await store.getLastRoute('hook:routed'), { channel: 'telegram', to: '42' });
  });

  it('works a backlog off in batches of the given size', async () => {
    for (let i = 0; i < 25; i++) {
      await store.enqueueRun(newRun(`b${i}`));
    }
    for (let i = 0; i < 25; i++) {
      const [c] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
      await store.completeRun(completion(c!, { finishedAt: f.clock.now(), transcript: [], delivery: null }));
    }
    await f.clock.advance(31 * DAY);
    const pruner = createPruner({
      store,
      retention,
      clock: f.clock,
      log: createLog({ level: 'silent' }),
      batchSize: 10,
    });
    const total = await pruner.pruneAll();
    assert.equal(total.runs, 25);
    assert.deepEqual(await store.listRuns(), []);
  });

  it('prunes what is due after rows dated ahead of the clock, and keeps those rows until they are due', async () => {
    const t = f.clock.now();
    // Written while the host's clock ran a year ahead, before it was set right: the oldest rows of
    // their tables, dated in the future.
    const ahead = t + 365 * DAY;
    await store.addSystemEvent(newEvent('written ahead', { createdAt: ahead }));
    await store.enqueueRun(newRun('hook:ahead', { createdAt: ahead }));
    await store.addDelivery(newDelivery({ createdAt: ahead }));
    const recordAhead = request(ahead);
    await store.recordRequest(recordAhead);
    // Then the clock is right again.
    for (let i = 0; i < 5; i++) await store.addSystemEvent(newEvent(`event ${i}`, { createdAt: t }));
    for (let i = 0; i < 5; i++) await store.enqueueRun(newRun(`hook:${i}`, { createdAt: t }));
    for (let i = 0; i < 3; i++) await store.addDelivery(newDelivery({ createdAt: t }));
    await Promise.all(Array.from({ length: 5 }, () => store.recordRequest(request(t))));
    for (
      let claimed = await store.claimRuns({ owner: 'w', limit: 10, leaseMs: 1000 });
      claimed.length > 0;
      claimed = await store.claimRuns({ owner: 'w', limit: 10, leaseMs: 1000 })
    ) {
      for (const c of claimed) {
        await store.completeRun(
          completion(c, {
            finishedAt: t,
            transcript: turn(c.sessionKey, c.id, c.sessionKey === 'hook:ahead' ? ahead : t),
            summary: newEvent('Hook agent: done', { createdAt: t }),
            delivery: null,
          }),
        );
      }
    }
    for (
      let claimed = await store.claimDueDeliveries({ owner: 'w', limit: 10, leaseMs: 1000, now: t });
      claimed.length > 0;
      claimed = await store.claimDueDeliveries({ owner: 'w', limit: 10, leaseMs: 1000, now: t })
    ) {
      for (const d of claimed) {
        await store.recordDeliveryAttempt({
          claimId: d.claimId,
          deliveryId: d.id,
          attempt: 1,
          at: t,
          status: 200,
          error: null,
          outcome: 'sent',
          resolvedChannel: 'telegram',
          resolvedTo: '42',
          partsSent: 1,
          nextAttemptAt: null,
          lastRoute: null,
        });
      }
    }
    const hb = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    const pending = (await store.listPendingEvents(MAIN, { limit: 100 })).map((e) => e.id);
    await store.recordHeartbeatTurn({
      claimId: hb!.claimId,
      sessionKey: MAIN,
      agentId: 'main',
      consumedEventIds: pending,
      transcript: [],
      delivery: null,
      at: t,
    });
    await store.releaseHeartbeat(hb!);

    await f.clock.advance(31 * DAY);
    const due = await store.countPrunable(pruneCutoffs(retention, f.clock.now()));
    // Everything consumed, finished or sent at t is due, dated ahead or not (events: 1 + 5 + 6 summaries);
    // the transcript and the request record dated ahead are not (they are due by that date).
    assert.deepEqual(due, {
      events: 12,
      runs: 6,
      deliveries: 4,
      transcript: 10,
      requests: 5,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 6,
    });
    const pruner = createPruner({
      store,
      retention,
      clock: f.clock,
      log: createLog({ level: 'silent' }),
      batchSize: 2,
    });
    assert.deepEqual(await pruner.pruneAll(), due);
    assert.deepEqual(await store.listSystemEvents({ limit: 100 }), []);
    assert.deepEqual(await store.listRuns(), []);
    assert.deepEqual(
      (await store.listRequests()).map((r) => r.id),
      [recordAhead.id],
      'the record dated ahead waits for its time',
    );
    const transcript = await store.readTranscript('hook:ahead', { limit: 10 });
    assert.equal(transcript.length, 2, 'the transcript dated ahead waits for its time');
  });

  it('counts a request record written twice in one turn once, as it deletes it', async () => {
    const t = f.clock.now();
    const r = request(t, { status: 202 });
    await Promise.all([
      store.recordRequest(r),
      store.recordRequest(request(t)),
      store.recordRequest({ ...r, status: 499, code: 'client_closed' }),
    ]);
    await f.clock.advance(8 * DAY);
    const cutoffs = pruneCutoffs(retention, f.clock.now());
    assert.equal((await store.countPrunable(cutoffs)).requests, 2);
    assert.equal((await store.prune(cutoffs, 100)).requests, 2);
    assert.deepEqual(await store.listRequests(), []);
  });
});
