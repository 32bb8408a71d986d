import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { setImmediate as tick } from 'node:timers/promises';
import { createLog } from '../../common/log.js';
import type { ClaimedSubscription, Store } from '../../store/index.js';
import { createStoreFixture, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { newEvent, newLogEvent, newSubscription } from '../../../test/helpers/store-records.js';
import type { WebhookClient, WebhookPost, WebhookResult } from './create-webhook-client.js';
import { createWakeup, type Wakeup } from './create-wakeup.js';
import { sendSubscription } from './send-subscription.js';

const KEY = Buffer.alloc(32, 7);

interface Post extends WebhookPost {
  at: number;
  json: Record<string, unknown>;
}

/** A callback that answers from a script (200 when it runs out) and keeps every post. */
function fakeClient(now: () => number) {
  const posts: Post[] = [];
  const script: Array<number | { status: number; retryAfterMs: number }> = [];
  const client: WebhookClient = {
    async post(p) {
      posts.push({ ...p, at: now(), json: JSON.parse(p.body) as Record<string, unknown> });
      const next = script.shift() ?? 200;
      const status = typeof next === 'number' ? next : next.status;
      const retryAfterMs = typeof next === 'number' ? undefined : next.retryAfterMs;
      return { kind: 'answered', status, retryAfterMs, body: '' } satisfies WebhookResult;
    },
    close: () => undefined,
  };
  return { client, posts, script };
}

describe('webhook sender, on a manual clock', () => {
  let f: StoreFixture;
  let store: Store;
  let fake: ReturnType<typeof fakeClient>;
  let wakeup: Wakeup;
  let stop: AbortController;
  let running: Promise<void> | undefined;
  beforeEach(async () => {
    f = await createStoreFixture('sqlite');
    store = f.store;
    fake = fakeClient(f.clock.now);
    wakeup = createWakeup(f.clock);
    stop = new AbortController();
    running = undefined;
  });
  afterEach(async () => {
    stop.abort();
    await running;
    await f.dispose();
  });

  const publish = async (text: string, o: Parameters<typeof newLogEvent>[1] = {}) => {
    const published = newLogEvent('hook.wake', { createdAt: f.clock.now(), data: { text }, ...o });
    await store.addSystemEvent(newEvent(text, { published }));
    wakeup.notify();
    return published;
  };
  const subscribe = async (o: Parameters<typeof newSubscription>[1] = {}): Promise<ClaimedSubscription> => {
    await store.saveSubscription(newSubscription('sub_t', { createdAt: f.clock.now(), ...o }), {
      maxSubscriptions: 10,
      now: f.clock.now(),
    });
    await store.activateSubscription('sub_t', f.clock.now());
    const [claim] = await store.claimSubscriptions({ owner: 'test', limit: 1, leaseMs: 3_600_000 });
    return claim!;
  };
  const start = (claim: ClaimedSubscription, signal = stop.signal): void => {
    running = sendSubscription(claim, signal, {
      store,
      client: fake.client,
      clock: f.clock,
      log: createLog({ level: 'silent' }),
      wakeup,
      random: () => 0,
      stopping: stop.signal,
      idleMs: 1_000,
    });
  };
  /** Moves the clock in small steps until `pred` holds (store writes settle between steps). */
  const until = async (pred: () => boolean | Promise<boolean>, maxMs = 600_000): Promise<void> => {
    for (let t = 0; t <= maxMs; t += 10) {
      for (let i = 0; i < 5; i++) await tick();
      if (await pred()) return;
      await f.clock.advance(10);
    }
    assert.fail('condition never held');
  };

  it('sends the occurrences after the cursor in order, signed, and writes the cursor under the claim', async () => {
    const a = await publish('a');
    const b = await publish('b');
    start(await subscribe());
    await until(() => fake.posts.length === 2);
    assert.deepEqual(
      fake.posts.map((p) => p.json['eventId']),
      [a.id, b.id],
    );
    const p = fake.posts[0]!;
    assert.equal(p.headers['webhook-id'], a.id);
    assert.equal(p.headers['x-mcp-subscription-id'], 'sub_t');
    const expected = createHmac('sha256', KEY)
      .update(`${a.id}.${p.headers['webhook-timestamp']}.${p.body}`)
      .digest('base64');
    assert.equal(p.headers['webhook-signature'], `v1,${expected}`);
    await until(async () => (await store.getSubscription('sub_t'))!.delivered === 2);
    const [e] = await store.readLogEvents({ name: 'hook.wake', after: 0, through: 1e9, limit: 1, agentId: 'main' });
    assert.ok((await store.getSubscription('sub_t'))!.cursor > e!.seq);
  });

  it('retries a refused delivery with backoff on the clock, then sends the rest in order', async () => {
    const a = await publish('a');
    const b = await publish('b');
    fake.script.push(503, 503);
    start(await subscribe());
    await until(() => fake.posts.length === 4);
    const t0 = fake.posts[0]!.at;
    assert.deepEqual(
      fake.posts.map((p) => [p.json['eventId'], p.at - t0]),
      [
        [a.id, 0],
        [a.id, 50],
        [a.id, 150],
        [b.id, 150],
      ],
      'backoff of 50 then 100 ms (no jitter), and b only after a was taken',
    );
  });

  it("waits out a callback's Retry-After", async () => {
    await publish('a');
    fake.script.push({ status: 429, retryAfterMs: 30_000 });
    start(await subscribe());
    await until(() => fake.posts.length === 2);
    assert.equal(fake.posts[1]!.at - fake.posts[0]!.at, 30_000);
  });

  it('deletes a subscription whose callback answered 410, and sends nothing more', async () => {
    await publish('a');
    await publish('b');
    fake.script.push(410);
    start(await subscribe());
    await running;
    assert.equal(fake.posts.length, 1);
    assert.equal(await store.getSubscription('sub_t'), null);
  });

  it('skips an occurrence its callback refused as too large (413) and goes on', async () => {
    await publish('a');
    const b = await publish('b');
    fake.script.push(413);
    start(await subscribe());
    await until(() => fake.posts.length === 2);
    assert.equal(fake.posts[1]!.json['eventId'], b.id);
  });

  it('sends a gap first when retention pruned past its cursor, then what came after', async () => {
    await publish('old', { createdAt: 1 });
    const claim = await subscribe({ cursor: 0 });
    await store.prune({ events: 0, runs: 0, deliveries: 0, transcript: 0, requests: 0, eventLog: 100 }, 10);
    const kept = await publish('new');
    start(claim);
    await until(() => fake.posts.length === 2);
    const { prunedThrough } = await store.readLogPosition();
    assert.deepEqual(fake.posts[0]!.json, { type: 'gap', cursor: `hg1.${prunedThrough}` });
    assert.match(fake.posts[0]!.headers['webhook-id']!, /^msg_gap_/);
    assert.equal(fake.posts[1]!.json['eventId'], kept.id);
  });

  it('skips occurrences older than maxAgeMs and says so with a gap', async () => {
    await publish('stale');
    await f.clock.advance(10_000);
    const fresh = await publish('fresh');
    start(await subscribe({ maxAgeMs: 5_000 }));
    await until(() => fake.posts.length === 2);
    assert.equal(fake.posts[0]!.json['type'], 'gap');
    assert.equal(fake.posts[1]!.json['eventId'], fresh.id);
  });

  it('moves a quiet subscription to the head without sending anything', async () => {
    await store.addSystemEvent(newEvent('x', { published: newLogEvent('hook.other') }));
    start(await subscribe());
    const { head } = await store.readLogPosition();
    await until(async () => (await store.getSubscription('sub_t'))!.cursor === head);
    assert.equal(fake.posts.length, 0);
  });

  it('sends the terminated notice once its TTL lapsed, then deletes it', async () => {
    start(await subscribe({ expiresAt: f.clock.now() + 2_000 }));
    await until(() => fake.posts.length === 1);
    assert.ok(fake.posts[0]!.at >= f.clock.now() - 1_000);
    assert.deepEqual(fake.posts[0]!.json, {
      type: 'terminated',
      error: { code: -32011, message: 'The subscription expired without a refresh.', data: { reason: 'expired' } },
    });
    await running;
    assert.equal(await store.getSubscription('sub_t'), null);
  });

  it('gives a notice up after its tries and deletes the subscription all the same', async () => {
    const claim = await subscribe();
    await store.terminateSubscription('sub_t', 'removed', f.clock.now());
    fake.script.push(500, 500, 500, 500, 500, 500);
    start(claim);
    await until(async () => (await store.getSubscription('sub_t')) === null);
    assert.equal(fake.posts.length, 5);
  });

  it('stops when its subscription was replaced by a new one with the same key', async () => {
    const claim = await subscribe();
    await store.deleteSubscription('sub_t');
    await f.clock.advance(1);
    await subscribe({ cursor: 0 });
    await publish('for the new one');
    start(claim);
    await running;
    assert.equal(fake.posts.length, 0, 'the old sender sends nothing to the new subscription');
  });

  it('stops, writing nothing more, once its claim was taken by another sender', async () => {
    await publish('a');
    const claim = await subscribe();
    await store.releaseSubscription(claim);
    await store.claimSubscriptions({ owner: 'other', limit: 1, leaseMs: 3_600_000 });
    start(claim);
    await running;
    const s = (await store.getSubscription('sub_t'))!;
    assert.equal(s.leaseOwner, 'other');
    assert.equal(s.delivered, 0);
  });
});
