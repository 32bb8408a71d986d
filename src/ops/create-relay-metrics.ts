import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RelayBacklog, RelayPruneCounts } from '../store/index.js';

/** The relay's metrics: its backlog read at scrape time, what its pull API and retention did. */
interface RelayMetrics {
  leased(count: number): void;
  acknowledged(counts: { done: number; refused: number }): void;
  pruned(counts: RelayPruneCounts): void;
}

/** What a home's pull did, by what its door made of each request. */
interface PullMetrics {
  passed(
    result: { kind: 'done' | 'refused' | 'failed'; outcome?: string; committedAt?: number },
    receivedAt: number,
  ): void;
  relayUp(up: boolean): void;
}

const age = (now: number, at: number | null): number => (at === null ? 0 : Math.max(0, (now - at) / 1000));

/** Registers the relay's metrics in a gateway's registry; the backlog is read at each scrape (indexed counts). */
export function createRelayMetrics(
  registry: Registry,
  deps: { backlog: () => Promise<RelayBacklog>; now: () => number; onSampleError?: (error: unknown) => void },
): RelayMetrics {
  const registers = [registry];
  let sample: Promise<RelayBacklog | null> | null = null;
  /** One read of the backlog serves both gauges of a scrape. */
  const read = (): Promise<RelayBacklog | null> => {
    sample ??= deps
      .backlog()
      .catch((error: unknown) => {
        deps.onSampleError?.(error);
        return null;
      })
      .finally(() => {
        setImmediate(() => {
          sample = null;
        });
      });
    return sample;
  };
  new Gauge({
    name: 'hookgate_relay_backlog',
    help: 'Requests the relay holds, by state: pending (waiting for the home), leased (pending, in a live lease), dead (dead letters).',
    labelNames: ['state'],
    registers,
    async collect() {
      const b = await read();
      if (b === null) return;
      this.set({ state: 'pending' }, b.pending);
      this.set({ state: 'leased' }, b.leased);
      this.set({ state: 'dead' }, b.dead);
    },
  });
  new Gauge({
    name: 'hookgate_relay_oldest_pending_age_seconds',
    help: 'Age of the oldest request waiting for the home (0 when none waits).',
    registers,
    async collect() {
      const b = await read();
      if (b !== null) this.set(age(deps.now(), b.oldestPendingAt));
    },
  });
  const leased = new Counter({
    name: 'hookgate_relay_leased_total',
    help: 'Requests handed out in leases (a request leased again after its lease expired counts again).',
    registers,
  });
  const acked = new Counter({
    name: 'hookgate_relay_acknowledged_total',
    help: 'Requests the home acknowledged, by outcome: done (committed there), refused (its door refused them; dead letters).',
    labelNames: ['outcome'],
    registers,
  });
  const pruned = new Counter({
    name: 'hookgate_relay_pruned_total',
    help: 'Relay rows deleted by retention, by kind: expired (pending, never acknowledged: lost), dead, done.',
    labelNames: ['kind'],
    registers,
  });
  return {
    leased: (n) => leased.inc(n),
    acknowledged(c) {
      if (c.done > 0) acked.inc({ outcome: 'done' }, c.done);
      if (c.refused > 0) acked.inc({ outcome: 'refused' }, c.refused);
    },
    pruned(c) {
      for (const [kind, n] of Object.entries(c)) if (n > 0) pruned.inc({ kind }, n);
    },
  };
}

/** Registers a home's pull metrics in a gateway's registry. */
export function createPullMetrics(registry: Registry): PullMetrics {
  const registers = [registry];
  const pulled = new Counter({
    name: 'hookgate_pull_requests_total',
    help: 'Requests pulled from the relay, by what this door made of them: accepted, duplicate, skipped, refused, failed (offered again).',
    labelNames: ['outcome'],
    registers,
  });
  const lag = new Histogram({
    name: 'hookgate_pull_lag_seconds',
    help: "Time from the relay's receipt of a request to its commit here.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30, 300, 3600],
    registers,
  });
  const up = new Gauge({
    name: 'hookgate_pull_relay_up',
    help: 'Whether the last lease from the relay succeeded (1) or failed (0).',
    registers,
  });
  return {
    passed(r, receivedAt) {
      pulled.inc({ outcome: r.kind === 'done' ? (r.outcome ?? 'accepted') : r.kind });
      if (r.kind === 'done' && r.outcome === 'accepted' && r.committedAt !== undefined)
        lag.observe(Math.max(0, (r.committedAt - receivedAt) / 1000));
    },
    relayUp: (isUp) => up.set(isUp ? 1 : 0),
  };
}
