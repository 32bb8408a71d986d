import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Log, LogFields } from '../common/log.js';
import type { LeasedRelayRequest, RelayRefusal } from '../store/index.js';
import { createManualClock, type ManualClock } from '../../test/helpers/manual-clock.js';
import { createPuller, type PullerOptions } from './create-puller.js';
import { RelayCallError, type RelayClient } from './create-relay-client.js';
import type { RelayedResult } from './pass-relayed-request.js';

interface Line {
  level: string;
  msg: string;
  fields: LogFields;
}

function recordingLog(lines: Line[]): Log {
  const log: Log = {
    debug: (msg, fields = {}) => void lines.push({ level: 'debug', msg, fields }),
    info: (msg, fields = {}) => void lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields = {}) => void lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields = {}) => void lines.push({ level: 'error', msg, fields }),
    child: () => log,
    flush: () => undefined,
    fixedLine: () => null,
  };
  return log;
}

const request = (id: string): LeasedRelayRequest => ({
  id,
  hook: 'github',
  url: '/hooks/github',
  headers: {},
  body: Buffer.from('{}'),
  auth: 'signature',
  receivedAt: 0,
  attempts: 1,
});

const OPTIONS: PullerOptions = { waitSeconds: 25, batchSize: 10, concurrency: 4, retryMaxMs: 60_000 };

type Lease = Awaited<ReturnType<RelayClient['lease']>>;

/**
 * A relay client driven by the test: each lease takes the next answer of `script` (an error to
 * throw, or a batch); past the script, a lease waits the asked seconds on the clock and hands out nothing.
 */
function scriptedClient(clock: ManualClock, script: Array<Error | LeasedRelayRequest[]>) {
  const acks: Array<{ ids: readonly string[]; refused: readonly RelayRefusal[] }> = [];
  const leasedAt: number[] = [];
  let n = 0;
  const client: RelayClient = {
    async lease(ask, signal) {
      leasedAt.push(clock.now());
      const next = script[n++];
      if (next instanceof Error) throw next;
      if (next !== undefined) return { leaseId: `lease-${n}`, leaseSeconds: 60, requests: next } satisfies Lease;
      await clock.sleep(ask.waitSeconds * 1000, signal);
      return { leaseId: `lease-${n}`, leaseSeconds: 60, requests: [] };
    },
    async ack(ask) {
      acks.push({ ids: ask.ids, refused: ask.refused });
    },
  };
  return { client, acks, leasedAt };
}

const done = (id: string): RelayedResult => ({ kind: 'done', id, outcome: 'accepted', committedAt: 0 });

describe('the pull loop', () => {
  it('acknowledges what the door committed and what it refused, and leaves what failed for the relay', async () => {
    const clock = createManualClock();
    const lines: Line[] = [];
    const { client, acks } = scriptedClient(clock, [[request('a'), request('b'), request('c')]]);
    const results: Record<string, RelayedResult> = {
      a: done('a'),
      b: { kind: 'refused', id: 'b', status: 401, code: 'signature_invalid', reason: 'no key verifies it' },
      c: { kind: 'failed', id: 'c', error: new Error('disk full') },
    };
    const puller = createPuller({
      client,
      pass: async (r) => results[r.id]!,
      clock,
      log: recordingLog(lines),
      random: () => 0,
      options: OPTIONS,
    });
    puller.start();
    await clock.advance(0);
    assert.deepEqual(acks, [
      { ids: ['a'], refused: [{ id: 'b', status: 401, code: 'signature_invalid', reason: 'no key verifies it' }] },
    ]);
    assert.deepEqual(puller.status().counts, { accepted: 1, duplicate: 0, skipped: 0, refused: 1, failed: 1 });
    assert.ok(lines.some((l) => l.level === 'warn' && /failed here/.test(l.msg)));
    await puller.stop();
  });

  it('pulls again with growing pauses while the relay is down, logging it once per interval', async () => {
    const clock = createManualClock();
    const lines: Line[] = [];
    const down = Array.from(
      { length: 40 },
      () => new RelayCallError('the relay cannot be reached (ECONNREFUSED)', null, undefined),
    );
    const { client, leasedAt } = scriptedClient(clock, down);
    const puller = createPuller({
      client,
      pass: async (r) => done(r.id),
      clock,
      log: recordingLog(lines),
      random: () => 0,
      options: { ...OPTIONS, logEveryMs: 60_000 },
    });
    const start = clock.now();
    puller.start();
    await clock.advance(59_000);
    // random 0: 500 ms, 1 s, 2 s, 4 s, 8 s, 16 s, then 30 s (half the 60 s cap, fixed part only).
    assert.deepEqual(
      leasedAt.map((t) => t - start),
      [0, 500, 1500, 3500, 7500, 15_500, 31_500],
    );
    const warned = () => lines.filter((l) => l.level === 'warn');
    assert.equal(warned().length, 1, 'one line for the outage so far');
    assert.equal(puller.status().relayUp, false);
    assert.equal(puller.status().failingSince, start);
    await clock.advance(60_000);
    assert.equal(warned().length, 2, 'and one more once the interval passed');
    assert.ok((warned()[1]!.fields['suppressed'] as number) >= 1, 'saying how many tries it stands for');
    await puller.stop();
  });

  it("waits the relay's Retry-After before the next pull", async () => {
    const clock = createManualClock();
    const locked = new RelayCallError('the relay refused /relay/lease (429 rate_limited)', 429, 45_000);
    const { client, leasedAt } = scriptedClient(clock, [locked]);
    const puller = createPuller({
      client,
      pass: async (r) => done(r.id),
      clock,
      log: recordingLog([]),
      random: () => 0,
      options: OPTIONS,
    });
    const start = clock.now();
    puller.start();
    await clock.advance(44_000);
    assert.equal(leasedAt.length, 1);
    await clock.advance(1000);
    assert.deepEqual(
      leasedAt.map((t) => t - start),
      [0, 45_000],
    );
    await puller.stop();
  });

  it('pauses before the next lease when this gateway failed on a batch, and says so when it works again', async () => {
    const clock = createManualClock();
    const lines: Line[] = [];
    const { client, leasedAt } = scriptedClient(clock, [[request('a')], [request('a')]]);
    let tries = 0;
    const puller = createPuller({
      client,
      pass: async (r) =>
        tries++ === 0 ? { kind: 'failed', id: r.id, error: new Error('store unavailable') } : done(r.id),
      clock,
      log: recordingLog(lines),
      random: () => 0,
      options: OPTIONS,
    });
    const start = clock.now();
    puller.start();
    await clock.advance(1000);
    // The second lease goes as the first batch arrives; the third once the second batch is in hand.
    assert.deepEqual(
      leasedAt.map((t) => t - start),
      [0, 0, 500],
    );
    assert.ok(lines.some((l) => l.level === 'info' && l.msg === 'relay pull works again'));
    assert.equal(puller.status().failingSince, null);
    await puller.stop();
  });

  it('finishes and acknowledges the batch in hand when it is stopped', async () => {
    const clock = createManualClock();
    const { client, acks } = scriptedClient(clock, [[request('a'), request('b')]]);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const puller = createPuller({
      client,
      pass: async (r) => {
        await held;
        return done(r.id);
      },
      clock,
      log: recordingLog([]),
      random: () => 0,
      options: OPTIONS,
    });
    puller.start();
    await clock.advance(0);
    const stopped = puller.stop();
    release();
    await stopped;
    assert.deepEqual(acks, [{ ids: ['a', 'b'], refused: [] }]);
  });
});
