import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import type { NewRelayRequest } from '../relay-queue.js';
import type { Store } from '../store.js';

const MINUTE = 60_000;

describeEachDriver('store contract: relay queue', (driver) => {
  let f: StoreFixture;
  let store: Store;
  let n = 0;
  const request = (o: Partial<NewRelayRequest> = {}): NewRelayRequest => {
    n++;
    return {
      id: `rel_${String(n).padStart(4, '0')}`,
      hook: 'github',
      url: '/hooks/github',
      headers: { 'content-type': 'application/json', 'x-github-delivery': `d-${n}` },
      body: Buffer.from(`{"n":${n}}`),
      auth: 'signature',
      key: null,
      keyExpiresAt: null,
      fingerprint: null,
      receivedAt: f.clock.now(),
      ...o,
    };
  };
  const lease = (o: { limit?: number; maxBytes?: number; leaseMs?: number; maxLeases?: number } = {}, on = store) =>
    on.leaseRelayRequests({
      leaseId: `lease-${n++}`,
      limit: o.limit ?? 10,
      maxBytes: o.maxBytes ?? 1024 * 1024,
      leaseMs: o.leaseMs ?? MINUTE,
      maxLeases: o.maxLeases ?? 5,
    });
  const ids = (rows: ReadonlyArray<{ id: string }>): string[] => rows.map((r) => r.id);

  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
    n = 0;
  });
  afterEach(() => f.dispose());

  it('hands a request out as received: its bytes, headers, hook, url and authentication', async () => {
    // Not valid UTF-8: the body is kept as bytes, never as text.
    const body = Buffer.from([0x7b, 0xff, 0x00, 0xfe, 0x7d]);
    const r = request({ body, auth: 'token', url: '/hooks/github?x=1' });
    assert.deepEqual(await store.addRelayRequest(r), { id: r.id, duplicate: false });
    const [got] = await lease();
    assert.ok(got);
    assert.deepEqual(
      { ...got, body: got.body.toString('hex') },
      {
        id: r.id,
        hook: 'github',
        url: '/hooks/github?x=1',
        headers: r.headers,
        body: body.toString('hex'),
        auth: 'token',
        receivedAt: r.receivedAt,
        attempts: 1,
      },
    );
  });

  it('answers a repeat of a key within its window with the first request, and records nothing new', async () => {
    const first = request({ key: 'delivery:abc', keyExpiresAt: f.clock.now() + MINUTE, fingerprint: 'sha256:aa' });
    await store.addRelayRequest(first);
    const repeat = request({ key: 'delivery:abc', keyExpiresAt: f.clock.now() + MINUTE, fingerprint: 'sha256:bb' });
    assert.deepEqual(
      await store.addRelayRequest(repeat),
      { id: first.id, duplicate: true, fingerprint: 'sha256:aa' },
      "with the first one's fingerprint, for the door to compare",
    );
    const other = request({ hook: 'stripe', key: 'delivery:abc', keyExpiresAt: f.clock.now() + MINUTE });
    assert.deepEqual(await store.addRelayRequest(other), { id: other.id, duplicate: false }, 'keys are per hook');
    assert.deepEqual(ids(await lease()), [first.id, other.id]);
  });

  it('takes a key whose window ended as a new request', async () => {
    const first = request({ key: 'k', keyExpiresAt: f.clock.now() + MINUTE });
    await store.addRelayRequest(first);
    await f.clock.advance(MINUTE);
    const later = request({ key: 'k', keyExpiresAt: f.clock.now() + MINUTE });
    assert.deepEqual(await store.addRelayRequest(later), { id: later.id, duplicate: false });
    const again = request({ key: 'k', keyExpiresAt: f.clock.now() + MINUTE });
    assert.deepEqual(await store.addRelayRequest(again), { id: later.id, duplicate: true, fingerprint: null });
  });

  it('leases the oldest first, within the limit and the byte budget, and always one', async () => {
    const a = request({ body: Buffer.alloc(600, 1) });
    const b = request({ body: Buffer.alloc(600, 2) });
    const c = request({ body: Buffer.alloc(10, 3) });
    for (const r of [a, b, c]) await store.addRelayRequest(r);
    assert.deepEqual(ids(await lease({ maxBytes: 100 })), [a.id], 'one larger than the budget still goes');
    assert.deepEqual(ids(await lease({ maxBytes: 1000 })), [b.id, c.id]);
    const d = request();
    const e = request();
    for (const r of [d, e]) await store.addRelayRequest(r);
    assert.deepEqual(ids(await lease({ limit: 1 })), [d.id]);
  });

  it('offers a leased request again only once its lease expired', async () => {
    const r = request();
    await store.addRelayRequest(r);
    assert.equal((await lease({ leaseMs: MINUTE })).length, 1);
    assert.deepEqual(await lease(), [], 'held by the first lease');
    await f.clock.advance(MINUTE + 1);
    const [again] = await lease();
    assert.equal(again?.id, r.id);
    assert.equal(again?.attempts, 2);
  });

  it('never hands the same request to two leases taken at once', async () => {
    for (let i = 0; i < 20; i++) await store.addRelayRequest(request());
    // PostgreSQL: another relay sharing the database; SQLite has one process per database.
    const other = driver === 'postgres' ? await f.open('serve') : store;
    const [x, y] = await Promise.all([lease({ limit: 15 }), lease({ limit: 15 }, other)]);
    const all = [...ids(x), ...ids(y)];
    assert.equal(new Set(all).size, all.length, 'no request in both');
    assert.equal(all.length, 20);
  });

  it('drops an acknowledged request from the backlog, keeping its key for its window', async () => {
    const r = request({ key: 'k', keyExpiresAt: f.clock.now() + 10 * MINUTE });
    await store.addRelayRequest(r);
    await lease();
    assert.deepEqual(await store.ackRelayRequests({ done: [r.id], refused: [], at: f.clock.now() }), {
      done: 1,
      refused: 0,
    });
    assert.deepEqual(await store.ackRelayRequests({ done: [r.id, 'rel_unknown'], refused: [], at: 1 }), {
      done: 0,
      refused: 0,
    });
    await f.clock.advance(2 * MINUTE);
    assert.deepEqual(await lease(), [], 'not offered again');
    assert.deepEqual(await store.addRelayRequest(request({ key: 'k', keyExpiresAt: 0 })), {
      id: r.id,
      duplicate: true,
      fingerprint: null,
    });
    const [row] = await store.listRelayRequests({ limit: 10 });
    assert.deepEqual([row?.state, row?.bytes, row?.endedAt], ['done', r.body.length, f.clock.now() - 2 * MINUTE]);
  });

  it('keeps a refused request as a dead letter with the reason, until an operator requeues it', async () => {
    const r = request();
    await store.addRelayRequest(r);
    await lease();
    const refusal = {
      id: r.id,
      status: 401,
      code: 'signature_invalid',
      reason: 'no key of mapping "github" verifies it',
    };
    assert.deepEqual(await store.ackRelayRequests({ done: [], refused: [refusal], at: f.clock.now() }), {
      done: 0,
      refused: 1,
    });
    await f.clock.advance(2 * MINUTE);
    assert.deepEqual(await lease(), []);
    const [dead] = await store.listRelayRequests({ state: 'dead', limit: 10 });
    assert.deepEqual([dead?.id, dead?.status, dead?.code, dead?.reason], [r.id, 401, refusal.code, refusal.reason]);
    assert.equal(await store.requeueRelayRequest(r.id), true);
    assert.equal(await store.requeueRelayRequest(r.id), false, 'only a dead letter is requeued');
    const [again] = await lease();
    assert.deepEqual([again?.id, again?.attempts, again?.body.toString()], [r.id, 1, r.body.toString()]);
  });

  it('dead-letters a request leased maxLeases times without an acknowledgement', async () => {
    const r = request();
    const next = request();
    await store.addRelayRequest(r);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(ids(await lease({ limit: 1, maxLeases: 2, leaseMs: 1 })), [r.id]);
      await f.clock.advance(2);
    }
    await store.addRelayRequest(next);
    assert.deepEqual(ids(await lease({ maxLeases: 2 })), [next.id]);
    const [dead] = await store.listRelayRequests({ state: 'dead', limit: 10 });
    assert.equal(dead?.id, r.id);
    assert.match(dead?.reason ?? '', /leased 2 times without an acknowledgement/);
    assert.equal(dead?.status, null);
  });

  it('counts the backlog: pending, leased now, dead, and when the oldest pending one arrived', async () => {
    assert.deepEqual(await store.readRelayBacklog(), { pending: 0, leased: 0, dead: 0, oldestPendingAt: null });
    const first = request();
    await store.addRelayRequest(first);
    await f.clock.advance(1000);
    for (let i = 0; i < 2; i++) await store.addRelayRequest(request());
    const [leased] = await lease({ limit: 1 });
    await store.ackRelayRequests({
      done: [],
      refused: [{ id: leased!.id, status: 400, code: 'invalid_payload', reason: 'text is required' }],
      at: f.clock.now(),
    });
    await lease({ limit: 1 });
    assert.deepEqual(await store.readRelayBacklog(), {
      pending: 2,
      leased: 1,
      dead: 1,
      oldestPendingAt: first.receivedAt + 1000,
    });
  });

  it('prunes what outlived the retention, and acknowledged requests once their key window ended', async () => {
    const old = request();
    const oldDead = request();
    const doneKeyed = request({ key: 'k', keyExpiresAt: f.clock.now() + 5 * MINUTE });
    const doneBare = request();
    for (const r of [old, oldDead, doneKeyed, doneBare]) await store.addRelayRequest(r);
    await lease();
    await store.ackRelayRequests({
      done: [doneKeyed.id, doneBare.id],
      refused: [{ id: oldDead.id, status: 401, code: 'signature_invalid', reason: 'x' }],
      at: f.clock.now(),
    });
    await f.clock.advance(MINUTE);
    const fresh = request();
    await store.addRelayRequest(fresh);
    const cutoffs = { receivedBefore: f.clock.now() - 30_000, now: f.clock.now() };
    assert.deepEqual(await store.pruneRelay(cutoffs, 100), { expired: 1, dead: 1, done: 1 });
    assert.deepEqual(
      (await store.listRelayRequests({ limit: 10 })).map((r) => [r.id, r.state]),
      [
        [fresh.id, 'pending'],
        [doneKeyed.id, 'done'],
      ],
    );
    await f.clock.advance(5 * MINUTE);
    assert.deepEqual(await store.pruneRelay({ receivedBefore: 0, now: f.clock.now() }, 100), {
      expired: 0,
      dead: 0,
      done: 1,
    });
  });
});
