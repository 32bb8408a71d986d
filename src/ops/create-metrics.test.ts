import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { metricValue, parseMetrics } from '../../test/helpers/read-metrics.js';
import type { QueueStats, StoreSize } from '../store/index.js';
import { createMetrics } from './create-metrics.js';

const queues = (o: Partial<QueueStats> = {}): QueueStats => ({
  queuedRuns: 0,
  runningRuns: 0,
  heldRuns: 0,
  pendingEvents: 0,
  pendingDeliveries: 0,
  oldestQueuedRunAt: null,
  oldestPendingEventAt: null,
  oldestPendingDeliveryAt: null,
  ...o,
});
const size: StoreSize = {
  totalBytes: 300,
  parts: [
    { name: 'database', bytes: 200 },
    { name: 'wal', bytes: 100 },
  ],
};

describe('createMetrics', () => {
  it('samples queue depths, oldest ages and size at render time', async () => {
    const now = 100_000;
    const m = createMetrics({
      now: () => now,
      sample: async () => ({ queues: queues({ queuedRuns: 3, oldestQueuedRunAt: 40_000 }), size }),
    });
    const s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_queue_depth', { queue: 'runs_queued' }), 3);
    assert.equal(metricValue(s, 'hookgate_queue_oldest_age_seconds', { queue: 'runs' }), 60);
    assert.equal(metricValue(s, 'hookgate_queue_oldest_age_seconds', { queue: 'events' }), 0);
    assert.equal(metricValue(s, 'hookgate_store_size_bytes', { part: 'wal' }), 100);
  });

  it('reads the store at most once per cacheMs', async () => {
    let now = 0;
    let reads = 0;
    const m = createMetrics({
      now: () => now,
      cacheMs: 2000,
      sample: async () => ({ queues: queues({ pendingEvents: ++reads }), size }),
    });
    await m.render();
    now = 1999;
    const cached = parseMetrics(await m.render());
    assert.equal(metricValue(cached, 'hookgate_queue_depth', { queue: 'events_pending' }), 1);
    now = 2000;
    const fresh = parseMetrics(await m.render());
    assert.equal(metricValue(fresh, 'hookgate_queue_depth', { queue: 'events_pending' }), 2);
    assert.equal(reads, 2);
  });

  it('keeps the last values and reports the error when sampling fails', async () => {
    let now = 0;
    let fail = false;
    const errors: unknown[] = [];
    const m = createMetrics({
      now: () => now,
      cacheMs: 10,
      onSampleError: (e) => errors.push(e),
      sample: async () => {
        if (fail) throw new Error('connection refused');
        return { queues: queues({ pendingDeliveries: 7 }), size };
      },
    });
    await m.render();
    fail = true;
    now = 100;
    const s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_queue_depth', { queue: 'deliveries_pending' }), 7);
    assert.equal(errors.length, 1);
  });

  it('counts connections turned away by reason, and reads the open connections at render time', async () => {
    let open = 12;
    const m = createMetrics({
      now: () => 0,
      sample: async () => ({ queues: queues(), size }),
      openConnections: () => open,
    });
    m.connectionTurnedAway('too_many_connections');
    m.connectionTurnedAway('too_many_connections');
    m.connectionTurnedAway('over_capacity');
    let s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_connections_refused_total', { reason: 'too_many_connections' }), 2);
    assert.equal(metricValue(s, 'hookgate_connections_refused_total', { reason: 'over_capacity' }), 1);
    assert.equal(metricValue(s, 'hookgate_connections_open'), 12);
    open = 3;
    s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_connections_open'), 3);
  });

  it('bounds the model label: past 50 distinct models the rest count as _other', async () => {
    const m = createMetrics({ now: () => 0, sample: async () => ({ queues: queues(), size }) });
    for (let i = 0; i < 60; i++) m.modelCall('openai', `model-${i}`, 'ok', { inputTokens: 1, outputTokens: 2 });
    const s = parseMetrics(await m.render());
    assert.equal(
      metricValue(s, 'hookgate_model_calls_total', { provider: 'openai', model: 'model-49', outcome: 'ok' }),
      1,
    );
    assert.equal(
      metricValue(s, 'hookgate_model_calls_total', { provider: 'openai', model: 'model-50', outcome: 'ok' }),
      undefined,
    );
    assert.equal(
      metricValue(s, 'hookgate_model_calls_total', { provider: 'openai', model: '_other', outcome: 'ok' }),
      10,
    );
    assert.equal(
      metricValue(s, 'hookgate_model_tokens_total', { provider: 'openai', model: '_other', direction: 'output' }),
      20,
    );
  });

  it('counts commits, failed ones apart, and runs without a known claim time only by state', async () => {
    const m = createMetrics({ now: () => 0, sample: async () => ({ queues: queues(), size }) });
    m.store.onCommit({ writes: 4, seconds: 0.002, ok: true });
    m.store.onCommit({ writes: 1, seconds: 0.001, ok: false });
    m.runFinished('failed', null);
    m.runFinished('succeeded', 1.5);
    const s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_store_commit_batch_size_sum'), 5);
    assert.equal(metricValue(s, 'hookgate_store_commit_failures_total'), 1);
    assert.equal(metricValue(s, 'hookgate_runs_finished_total', { state: 'failed' }), 1);
    assert.equal(metricValue(s, 'hookgate_run_duration_seconds_count', { state: 'failed' }), undefined);
    assert.equal(metricValue(s, 'hookgate_run_duration_seconds_sum', { state: 'succeeded' }), 1.5);
  });

  it("counts the refusals' records the request log did not keep", async () => {
    const m = createMetrics({ now: () => 0, sample: async () => ({ queues: queues(), size }) });
    m.requestRecordDropped();
    m.requestRecordDropped();
    assert.equal(metricValue(parseMetrics(await m.render()), 'hookgate_request_records_dropped_total'), 2);
  });

  it('counts pruned rows by kind, failed prune passes, and when a pass last ended without an error', async () => {
    let now = 0;
    const m = createMetrics({ now: () => now, sample: async () => ({ queues: queues(), size }) });
    let s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_prune_last_success_timestamp_seconds'), 0);
    m.pruner.pruned({
      events: 100,
      runs: 3,
      deliveries: 0,
      transcript: 0,
      requests: 7,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 0,
    });
    m.pruner.pruned({
      events: 20,
      runs: 0,
      deliveries: 0,
      transcript: 0,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 2,
      sessions: 0,
    });
    now = 1_700_000_000_000;
    m.pruner.passEnded(true);
    now += 60_000;
    m.pruner.passEnded(false);
    s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_pruned_rows_total', { kind: 'events' }), 120);
    assert.equal(metricValue(s, 'hookgate_pruned_rows_total', { kind: 'runs' }), 3);
    assert.equal(metricValue(s, 'hookgate_pruned_rows_total', { kind: 'requests' }), 7);
    assert.equal(metricValue(s, 'hookgate_pruned_rows_total', { kind: 'idempotencyKeys' }), 2);
    assert.equal(
      metricValue(s, 'hookgate_pruned_rows_total', { kind: 'deliveries' }),
      undefined,
      'a kind never pruned has no series',
    );
    assert.equal(metricValue(s, 'hookgate_prune_failures_total'), 1);
    assert.equal(
      metricValue(s, 'hookgate_prune_last_success_timestamp_seconds'),
      1_700_000_000,
      'the failed pass leaves the last success',
    );
  });

  it('counts answered requests by hook and status, each counted once across scrapes', async () => {
    const m = createMetrics({ now: () => 0, sample: async () => ({ queues: queues(), size }) });
    m.recordRequest('wake', 200);
    m.recordRequest('wake', 200);
    m.recordRequest('wake', null);
    let s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_requests_total', { hook: 'wake', status: '200' }), 2);
    assert.equal(metricValue(s, 'hookgate_requests_total', { hook: 'wake', status: 'none' }), 1);
    m.recordRequest('wake', 200);
    m.recordRequest('agent', 202);
    s = parseMetrics(await m.render());
    assert.equal(metricValue(s, 'hookgate_requests_total', { hook: 'wake', status: '200' }), 3);
    assert.equal(metricValue(s, 'hookgate_requests_total', { hook: 'wake', status: 'none' }), 1);
    assert.equal(metricValue(s, 'hookgate_requests_total', { hook: 'agent', status: '202' }), 1);
  });
});
