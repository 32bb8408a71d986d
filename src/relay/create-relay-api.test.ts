import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWakeup } from '../common/create-wakeup.js';
import { createIds } from '../common/ids.js';
import { RequestError } from '../common/errors.js';
import type { LeasedRelayRequest, RelayQueue } from '../store/index.js';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createRelayApi } from './create-relay-api.js';

const CONFIG = { leaseSeconds: 60, maxBatch: 50, maxBatchBytes: 1024, maxWaitSeconds: 30, maxLeases: 5 };

/** A queue holding `pending`, handing them all out to the first lease that asks. */
function fakeQueue() {
  const pending: LeasedRelayRequest[] = [];
  const asked: Array<{ limit: number; maxBytes: number; leaseMs: number; maxLeases: number }> = [];
  const store: Pick<RelayQueue, 'leaseRelayRequests' | 'ackRelayRequests'> = {
    async leaseRelayRequests(o) {
      asked.push({ limit: o.limit, maxBytes: o.maxBytes, leaseMs: o.leaseMs, maxLeases: o.maxLeases });
      return pending.splice(0, o.limit);
    },
    async ackRelayRequests(a) {
      return { done: a.done.length, refused: a.refused.length };
    },
  };
  const add = (id: string): void =>
    void pending.push({
      id,
      hook: 'github',
      url: '/hooks/github',
      headers: { 'x-github-event': 'push' },
      body: Buffer.from('{"n":1}'),
      auth: 'signature',
      receivedAt: 5,
      attempts: 1,
    });
  return { store, add, asked };
}

function setup() {
  const clock = createManualClock();
  const wakeup = createWakeup(clock);
  const q = fakeQueue();
  const api = createRelayApi({ store: q.store, config: CONFIG, wakeup, clock, ids: createIds(clock.now) });
  const lease = (body: unknown, signal = new AbortController().signal) =>
    api.handle({ path: '/relay/lease', body: Buffer.from(JSON.stringify(body)), signal });
  const requests = (a: { body: string }) =>
    (JSON.parse(a.body) as { requests: Array<{ id: string; body: string }> }).requests;
  return { clock, wakeup, q, api, lease, requests };
}

describe('the pull API core', () => {
  it("hands out waiting requests at once, their bodies in base64, within the relay's bounds", async () => {
    const t = setup();
    t.q.add('a');
    const answer = await t.lease({ waitSeconds: 300, max: 1000 });
    assert.equal(answer.status, 200);
    const body = JSON.parse(answer.body) as { ok: boolean; leaseId: string; leaseSeconds: number };
    assert.deepEqual([body.ok, body.leaseSeconds, typeof body.leaseId], [true, 60, 'string']);
    assert.deepEqual(
      t.requests(answer).map((r) => [r.id, Buffer.from(r.body, 'base64').toString()]),
      [['a', '{"n":1}']],
    );
    assert.deepEqual(t.q.asked, [{ limit: 50, maxBytes: 1024, leaseMs: 60_000, maxLeases: 5 }]);
  });

  it('waits for a request to be announced, then answers with it', async () => {
    const t = setup();
    const pending = t.lease({ waitSeconds: 20 });
    await t.clock.advance(500);
    t.q.add('late');
    t.wakeup.notify();
    const answer = await pending;
    assert.deepEqual(
      t.requests(answer).map((r) => r.id),
      ['late'],
    );
  });

  it('looks again every second for what another relay recorded, and answers empty when the wait ends', async () => {
    const t = setup();
    const pending = t.lease({ waitSeconds: 3 });
    await t.clock.advance(3000);
    const answer = await pending;
    assert.deepEqual(t.requests(answer), []);
    assert.equal(t.q.asked.length, 4, 'at 0, 1, 2 and 3 s');
  });

  it('answers a waiting lease at once when the relay closes', async () => {
    const t = setup();
    const pending = t.lease({ waitSeconds: 30 });
    await t.clock.advance(100);
    t.api.close();
    assert.deepEqual(t.requests(await pending), []);
  });

  it('leases nothing for a home that hung up', async () => {
    const t = setup();
    const gone = new AbortController();
    const pending = t.lease({ waitSeconds: 30 }, gone.signal);
    await t.clock.advance(100);
    gone.abort();
    t.q.add('a');
    assert.deepEqual(t.requests(await pending), []);
    assert.equal(t.q.asked.length, 1, 'the request stays for the next lease');
  });

  it('acknowledges committed and refused requests', async () => {
    const t = setup();
    const body = { ids: ['a', 'b'], refused: [{ id: 'c', status: 401, code: 'signature_invalid', reason: 'x' }] };
    const answer = await t.api.handle({
      path: '/relay/ack',
      body: Buffer.from(JSON.stringify(body)),
      signal: new AbortController().signal,
    });
    assert.deepEqual(JSON.parse(answer.body), { ok: true, done: 2, refused: 1 });
  });

  it('refuses another path under /relay with not_found', async () => {
    const t = setup();
    await assert.rejects(
      t.api.handle({ path: '/relay/other', body: Buffer.alloc(0), signal: new AbortController().signal }),
      (e: unknown) => e instanceof RequestError && e.code === 'not_found',
    );
  });
});
