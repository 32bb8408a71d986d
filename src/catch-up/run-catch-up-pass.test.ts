import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../common/log.js';
import { RequestError } from '../common/errors.js';
import type { HookHandler } from '../hooks/index.js';
import { createStoreFixture, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { CatchUpError, keepOldest, type CatchUpSource, type CaughtUpRef } from './catch-up-source.js';
import { OVERLAP_MS, runCatchUpPass, type CatchUpPassDeps, type CatchUpTarget } from './run-catch-up-pass.js';

const HORIZON_MS = 72 * 3_600_000;

/** A provider whose record is `events` (newest last); it lists what is at or after `from`. */
function memorySource(events: CaughtUpRef[], failOn?: string) {
  const froms: number[] = [];
  const source: CatchUpSource = {
    provider: 'stripe',
    async list(from, max, _signal, after) {
      froms.push(from);
      const inWindow = events.filter((e) => e.at >= from).reverse();
      const { kept, truncated } = keepOldest(inWindow, max, after);
      return { refs: kept, listed: inWindow.length, truncated };
    },
    async load(ref) {
      if (ref.id === failOn) throw new CatchUpError(`GET /v1/events/${ref.id}: HTTP 500`, 500);
      return { headers: {}, payload: { object: 'event', id: ref.id } };
    },
  };
  return { source, froms };
}

describe('a catch-up pass', () => {
  let f: StoreFixture;
  let handled: string[];
  let deps: CatchUpPassDeps;
  const handleHook: HookHandler = async (call) => {
    if (call.payload['id'] === 'evt_refused') throw new RequestError('invalid_payload');
    handled.push(String(call.deliveryId));
    await f.store.recordActions({
      events: [],
      runs: [],
      idempotency: {
        hook: call.name,
        key: `delivery:${call.deliveryId}`,
        status: 204,
        body: '',
        createdAt: f.clock.now(),
        expiresAt: f.clock.now() + HORIZON_MS,
      },
    });
    return { kind: 'skip' };
  };
  const target = (source: CatchUpSource, maxEvents = 100): CatchUpTarget => ({
    mappingId: 'stripe',
    hookName: 'stripe',
    source,
    redeliver: false,
    maxEvents,
  });
  const ev = (id: string, agoMs: number): CaughtUpRef => ({ id, at: f.clock.now() - agoMs });
  const position = async () => (await f.store.listCatchUps())[0];

  beforeEach(async () => {
    f = await createStoreFixture('sqlite');
    handled = [];
    deps = {
      store: f.store,
      handleHook,
      hooksPath: () => '/hooks',
      horizonMs: () => HORIZON_MS,
      clock: f.clock,
      log: createLog({ level: 'silent' }),
      owner: 'test',
    };
  });
  afterEach(() => f.dispose());

  it('reads only the overlap on its first pass, then from where the last one ended', async () => {
    const events = [ev('evt_old', 10 * OVERLAP_MS), ev('evt_recent', 1000)];
    const { source, froms } = memorySource(events);
    const first = await runCatchUpPass(deps, target(source));
    assert.deepEqual([first.outcome, first.accepted], ['done', 0]);
    assert.deepEqual(handled, ['evt_recent'], 'skips (204) count as handled through the mapping');
    assert.equal(first.skipped, 1);
    assert.equal((await position())?.cursorAt, f.clock.now());
    await f.clock.advance(60_000);
    events.push(ev('evt_new', 0));
    const second = await runCatchUpPass(deps, target(source));
    assert.equal(froms[1], f.clock.now() - 60_000 - OVERLAP_MS);
    assert.deepEqual(handled, ['evt_recent', 'evt_new']);
    assert.equal(second.duplicates, 1, 'the overlap read again is recognised by the ids');
  });

  it('stops at a call that fails and starts the next pass at that event', async () => {
    const events = [ev('evt_1', 3000), ev('evt_2', 2000), ev('evt_3', 1000)];
    const { source, froms } = memorySource(events, 'evt_2');
    const r = await runCatchUpPass(deps, target(source));
    assert.equal(r.outcome, 'failed');
    assert.equal(r.error, 'GET /v1/events/evt_2: HTTP 500');
    assert.deepEqual(handled, ['evt_1']);
    assert.equal((await position())?.lastId, 'evt_1');
    await runCatchUpPass(deps, target(memorySource(events).source));
    await runCatchUpPass(deps, target(source)).catch(() => undefined);
    assert.equal(froms.length, 2);
    assert.deepEqual(handled, ['evt_1', 'evt_2', 'evt_3'], 'each once');
  });

  it('takes a window larger than maxEvents a pass at a time, and moves on past a moment shared by many', async () => {
    const at = f.clock.now() - 1000;
    const events = Array.from({ length: 5 }, (_, i) => ({ id: `evt_${i}`, at }));
    const { source } = memorySource(events);
    const reports = [];
    for (let i = 0; i < 3; i++) reports.push(await runCatchUpPass(deps, target(source, 2)));
    assert.deepEqual(
      reports.map((r) => [r.truncated, r.skipped]),
      [
        [true, 2],
        [true, 2],
        [false, 1],
      ],
    );
    assert.deepEqual(handled, ['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4']);
  });

  it('counts a refusal by the mapping as handled, and goes on', async () => {
    const { source } = memorySource([ev('evt_refused', 2000), ev('evt_ok', 1000)]);
    const r = await runCatchUpPass(deps, target(source));
    assert.deepEqual([r.outcome, r.refused, r.skipped], ['done', 1, 1]);
  });

  it('reads no further back than idempotency keys are kept, and says so', async () => {
    const { source, froms } = memorySource([]);
    const r = await runCatchUpPass(deps, target(source), { sinceMs: f.clock.now() - 30 * 86_400_000 });
    assert.equal(r.clamped, true);
    assert.equal(froms[0], f.clock.now() - HORIZON_MS);
  });

  it('does nothing while another process holds the mapping’s pass', async () => {
    const claim = await f.store.claimCatchUp({ mappingId: 'stripe', owner: 'other', leaseMs: 60_000 });
    assert.notEqual(claim, null);
    const r = await runCatchUpPass(deps, target(memorySource([ev('evt_1', 10)]).source));
    assert.equal(r.outcome, 'busy');
    assert.deepEqual(handled, []);
  });
});
