import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIds } from '../common/ids.js';
import { createLog } from '../common/log.js';
import type { ChannelsConfig } from '../config/index.js';
import { systemClock } from '../common/clock.js';
import type { DeliveryWithAttempts, Store } from '../store/index.js';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { DeliveryError, type ChannelAdapter } from './channel-adapter.js';
import { DeliveryWorker } from './delivery-worker.js';

const ids = createIds();

/** An in-memory channel whose answers the test scripts. */
function scriptedChannel(name: string, maxMessageChars = 100) {
  const sent: Array<{ to: string; text: string }> = [];
  const failures: Array<DeliveryError | null> = [];
  const adapter: ChannelAdapter = {
    name,
    maxMessageChars,
    async send(to, text) {
      const next = failures.shift();
      if (next) throw next;
      sent.push({ to, text });
    },
  };
  return { adapter, sent, failures };
}

describeEachDriver('DeliveryWorker', (driver) => {
  let f: StoreFixture;
  let store: Store;
  let worker: DeliveryWorker | undefined;
  const channels = { telegram: { botToken: 't', defaultTo: '100' }, discord: { botToken: 'd' } } as ChannelsConfig;

  beforeEach(async () => {
    f = await createStoreFixture(driver, { leaseClock: systemClock });
    store = f.store;
  });
  afterEach(async () => {
    await worker?.stop();
    await f.dispose();
  });

  const start = (
    adapters: ChannelAdapter[],
    extra: {
      maxAttempts?: number;
      maxAgeMs?: number;
      scrub?: (t: string) => string;
      maxWakeups?: number;
      guard?: { allowedLinkHosts: string[] };
    } = {},
  ): DeliveryWorker => {
    worker = new DeliveryWorker({
      store,
      log: createLog({ level: 'silent' }),
      clock: systemClock,
      random: () => 0,
      channels,
      adapters: new Map(adapters.map((a) => [a.name, a])),
      owner: 'test',
      backoffBaseMs: 20,
      pollMs: 50,
      ...extra,
    });
    worker.start();
    return worker;
  };
  const add = async (channel: string, to: string | null, text = 'hello'): Promise<string> => {
    const id = ids.next();
    const d = { id, agentId: 'main', channel, to, text, runId: null, createdAt: Date.now() };
    await store.addDelivery(d);
    worker?.deliver(d);
    return id;
  };
  const settled = async (id: string): Promise<DeliveryWithAttempts> => {
    for (let i = 0; i < 200; i++) {
      const d = await store.getDelivery(id);
      if (d !== null && d.state !== 'pending') return d;
      await sleep(20);
    }
    throw new Error(`delivery ${id} never settled`);
  };

  it('sends to an explicit route and makes it the main session last route', async () => {
    const tg = scriptedChannel('telegram');
    start([tg.adapter]);
    const d = await settled(await add('telegram', '123'));
    assert.equal(d.state, 'sent');
    assert.deepEqual(tg.sent, [{ to: '123', text: 'hello' }]);
    assert.deepEqual(
      d.attemptLog.map((a) => a.outcome),
      ['sent'],
    );
    const main = await store.getSession('agent:main:main');
    assert.equal(main?.lastChannel, 'telegram');
    assert.equal(main?.lastTo, '123');
  });

  it('sends "last" to the last route, then to the first configured channel with its defaultTo', async () => {
    const tg = scriptedChannel('telegram');
    const dc = scriptedChannel('discord');
    start([tg.adapter, dc.adapter]);
    assert.equal((await settled(await add('last', null))).state, 'sent');
    assert.deepEqual(tg.sent, [{ to: '100', text: 'hello' }], 'first configured channel in spec order, defaultTo');
    assert.equal(
      (await store.getSession('agent:main:main'))?.lastChannel ?? null,
      null,
      'a fallback route is not remembered',
    );
    await settled(await add('discord', '555'));
    await settled(await add('last', null, 'again'));
    assert.deepEqual(dc.sent.at(-1), { to: '555', text: 'again' });
  });

  it('sends the reply through the exfiltration guard, with the allowed hosts read at each delivery', async () => {
    const tg = scriptedChannel('telegram');
    const guard = { allowedLinkHosts: [] as string[] };
    start([tg.adapter], { guard });
    const text = 'See https://attacker.example/c?d=SECRET and ![x](https://github.com/p.png) https://github.com/a';
    await settled(await add('telegram', '1', text));
    assert.equal(tg.sent.at(-1)?.text, 'See hxxps://attacker[.]example/… and (image: x) hxxps://github[.]com/…');
    guard.allowedLinkHosts = ['github.com'];
    await settled(await add('telegram', '1', text));
    assert.equal(tg.sent.at(-1)?.text, 'See hxxps://attacker[.]example/… and (image: x) https://github.com/a');
  });

  it('guards a reply before it splits it, so a link cut in two is not missed', async () => {
    const tg = scriptedChannel('telegram', 30);
    start([tg.adapter]);
    await settled(await add('telegram', '1', `${'x'.repeat(20)} https://attacker.example/c?d=SECRET`));
    const joined = tg.sent.map((m) => m.text).join('');
    assert.ok(!joined.includes('SECRET') && !joined.includes('attacker.example'), joined);
  });

  it('skips, with the reason, when there is no recipient', async () => {
    start([scriptedChannel('discord').adapter]);
    const d = await settled(await add('discord', null));
    assert.equal(d.state, 'skipped');
    assert.match(d.error ?? '', /no recipient on discord/);
  });

  it('retries a 429 once, honouring the hint, and sends exactly once', async () => {
    const tg = scriptedChannel('telegram');
    tg.failures.push(
      new DeliveryError('telegram 429: Too Many Requests', { status: 429, retryable: true, retryAfterMs: 100 }),
    );
    start([tg.adapter]);
    const started = Date.now();
    const d = await settled(await add('telegram', '1'));
    assert.equal(d.state, 'sent');
    assert.equal(tg.sent.length, 1);
    assert.deepEqual(
      d.attemptLog.map((a) => [a.outcome, a.status]),
      [
        ['retry', 429],
        ['sent', null],
      ],
    );
    assert.ok(Date.now() - started >= 90, 'waited for the hint');
  });

  it('fails at once on a 4xx with the readable reason, and can be requeued', async () => {
    const tg = scriptedChannel('telegram');
    tg.failures.push(new DeliveryError('telegram 401: Unauthorized', { status: 401, retryable: false }));
    start([tg.adapter]);
    const id = await add('telegram', '1');
    const d = await settled(id);
    assert.equal(d.state, 'failed');
    assert.equal(d.error, 'telegram 401: Unauthorized');
    assert.equal(tg.sent.length, 0);
    assert.equal(await store.requeueDelivery(id, Date.now()), true);
    worker!.notify();
    const again = await settled(id);
    assert.equal(again.state, 'sent');
    assert.deepEqual(
      again.attemptLog.map((a) => a.outcome),
      ['failed', 'sent'],
    );
  });

  it('scrubs a credential the channel echoed before recording the failure, keeping its status', async () => {
    const tg = scriptedChannel('telegram');
    const token = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
    tg.failures.push(
      new DeliveryError(`POST https://api.telegram.org/bot${token}/sendMessage: 403 Forbidden`, {
        status: 403,
        retryable: false,
      }),
    );
    start([tg.adapter], { scrub: (t) => t.replaceAll(token, '[redacted]') });
    const d = await settled(await add('telegram', '1'));
    assert.equal(d.state, 'failed');
    assert.equal(d.error, 'POST https://api.telegram.org/bot[redacted]/sendMessage: 403 Forbidden');
    assert.equal(d.attemptLog[0]?.status, 403);
  });

  it('keeps at most maxWakeups retry timers, and the poll still finds the retries past them', async () => {
    const tg = scriptedChannel('telegram');
    for (let i = 0; i < 5; i++)
      tg.failures.push(
        new DeliveryError('telegram 429: Too Many Requests', { status: 429, retryable: true, retryAfterMs: 300 }),
      );
    start([tg.adapter], { maxWakeups: 2 });
    const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => add('telegram', String(i))));
    for (let i = 0; i < 100; i++) {
      const pending = await Promise.all(ids.map((id) => store.getDelivery(id)));
      if (pending.every((d) => d!.attemptLog.length === 1)) break;
      await sleep(10);
    }
    assert.equal(worker!.wakeupsWaiting, 2, 'five retries waiting, two timers');
    for (const id of ids) assert.equal((await settled(id)).state, 'sent');
    assert.equal(tg.sent.length, 5);
  });

  it('gives up after maxAttempts of retryable failures', async () => {
    const tg = scriptedChannel('telegram');
    for (let i = 0; i < 5; i++)
      tg.failures.push(new DeliveryError('telegram 502: Bad Gateway', { status: 502, retryable: true }));
    start([tg.adapter], { maxAttempts: 3 });
    const d = await settled(await add('telegram', '1'));
    assert.equal(d.state, 'failed');
    assert.match(d.error ?? '', /gave up after 3 attempts/);
    assert.equal(d.attemptLog.length, 3);
  });

  it('splits a long reply and never resends a part the service accepted', async () => {
    const tg = scriptedChannel('telegram', 10);
    start([tg.adapter]);
    const text = 'aaaa bbbb cccc dddd eeee';
    tg.failures.push(null, new DeliveryError('telegram 500', { status: 500, retryable: true }));
    const d = await settled(await add('telegram', '1', text));
    assert.equal(d.state, 'sent');
    assert.equal(tg.sent.map((s) => s.text).join(''), text, 'each part once, in order');
    assert.equal(d.partsSent, 3);
  });

  it('records a send once the store can write again, and never sends it again', async () => {
    const tg = scriptedChannel('telegram');
    let refusals = 2;
    const flaky: Store = Object.create(store, {
      recordDeliveryAttempt: {
        value: (r: Parameters<Store['recordDeliveryAttempt']>[0]) => {
          if (refusals-- > 0)
            return Promise.reject(Object.assign(new Error('terminating connection'), { code: '57P01' }));
          return store.recordDeliveryAttempt(r);
        },
      },
    }) as Store;
    worker = new DeliveryWorker({
      store: flaky,
      log: createLog({ level: 'silent' }),
      clock: systemClock,
      random: () => 0,
      channels,
      adapters: new Map([[tg.adapter.name, tg.adapter]]),
      owner: 'test',
      pollMs: 50,
    });
    worker.start();
    const d = await settled(await add('telegram', '7'));
    assert.equal(d.state, 'sent');
    assert.equal(refusals, -1, 'the record was tried three times');
    assert.deepEqual(tg.sent, [{ to: '7', text: 'hello' }]);
  });

  it('resumes pending deliveries left by a previous process', async () => {
    const id = await add('telegram', '9');
    const tg = scriptedChannel('telegram');
    start([tg.adapter]);
    assert.equal((await settled(id)).state, 'sent');
  });
});
