import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type {
  DispatchHold,
  PruneObserver,
  QueueStats,
  RunOutcomeState,
  StoreObserver,
  StoreSize,
} from '../store/index.js';

/** What one delivery attempt ended as. */
export type DeliveryOutcome = 'sent' | 'retry' | 'failed' | 'skipped';

/** What a catch-up pass did, as its metrics count it. */
interface CatchUpPassCounts {
  mappingId: string;
  outcome: 'done' | 'busy' | 'failed';
  accepted: number;
  skipped: number;
  refused: number;
  duplicates: number;
  redelivered: number;
}

/** Token counts a provider reported for one call. */
interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
}

/** The gateway's Prometheus metrics: one registry per gateway, so several can run in one process. */
export interface GatewayMetrics {
  /** One answered hook request; `hook` is already a bounded label (see `createHookLabeler`). */
  recordRequest(hook: string, status: number | null): void;
  authFailure(): void;
  /** A refused request's record was not kept (refusals past the request log's rate). */
  requestRecordDropped(): void;
  lockout(): void;
  /** A connection turned away: past `gateway.maxConnections`, or past its client's share of them. */
  connectionTurnedAway(reason: 'over_capacity' | 'too_many_connections'): void;
  /** A connection closed at `gateway.maxConnections` to let a newer one in. */
  connectionClosedForNewer(): void;
  /** Sees the store's group commits. */
  readonly store: StoreObserver;
  /** Sees the background pruner's batches and passes. */
  readonly pruner: PruneObserver;
  /** A catch-up pass of a mapping ended (`mapping` is a configured mapping id). */
  catchUpPass(pass: CatchUpPassCounts): void;
  /** A run reached a terminal state; `seconds` from its claim, when known. */
  runFinished(state: RunOutcomeState, seconds: number | null): void;
  modelCall(provider: string, model: string, outcome: 'ok' | 'error', usage: TokenCounts | undefined): void;
  deliveryAttempt(channel: string, outcome: DeliveryOutcome): void;
  /** Sees the MCP Events webhook sender: occurrences delivered (with their lag) and failed tries. */
  readonly mcpSender: { delivered(lagMs: number): void; failed(reason: string): void };
  /** The Prometheus text exposition, with queue depths sampled now (or from the short cache). */
  render(): Promise<string>;
  /** The registry, for the metrics of parts only some gateways run (a relay's, a home's pull). */
  readonly registry: Registry;
  readonly contentType: string;
}

interface MetricsDeps {
  /** Queue depths and store size, read at scrape time. */
  sample: () => Promise<{ queues: QueueStats; size: StoreSize }>;
  now: () => number;
  /** How long a sample serves scrapes. @default 2000 */
  cacheMs?: number;
  /** Connections open now, read at scrape time. */
  openConnections?: () => number;
  /** Called when sampling fails (the previous values stay). */
  onSampleError?: (error: unknown) => void;
  /** The dispatch holds this replica knows of, and whether it drains itself, read at scrape time. */
  dispatch?: () => { holds: ReadonlyArray<Pick<DispatchHold, 'scope' | 'key' | 'kind'>>; draining: boolean };
}

/** Distinct values one free-form label (a model id) may take before the rest count as `_other`. */
const MAX_LABEL_VALUES = 50;

function boundedLabel(): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= MAX_LABEL_VALUES) return '_other';
    seen.add(value);
    return value;
  };
}

const age = (now: number, at: number | null): number => (at === null ? 0 : Math.max(0, (now - at) / 1000));

/** Creates the metrics of one gateway, with Node's default process metrics in the same registry. */
export function createMetrics(deps: MetricsDeps): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const cacheMs = deps.cacheMs ?? 2000;
  const modelLabel = boundedLabel();

  // Answered requests are counted in plain maps (hook, then status) on the request path and added
  // to the counter when it is scraped: a labelled inc() serializes its labels on every call.
  const answered = new Map<string, Map<number | null, { labels: { hook: string; status: string }; n: number }>>();
  new Counter({
    name: 'hookgate_requests_total',
    help: 'Hook requests answered, by hook and HTTP status.',
    labelNames: ['hook', 'status'],
    registers,
    collect() {
      for (const byStatus of answered.values()) {
        for (const a of byStatus.values()) {
          if (a.n === 0) continue;
          this.inc(a.labels, a.n);
          a.n = 0;
        }
      }
    },
  });
  const countAnswered = (hook: string, status: number | null): void => {
    let byStatus = answered.get(hook);
    if (byStatus === undefined) {
      byStatus = new Map();
      answered.set(hook, byStatus);
    }
    let a = byStatus.get(status);
    if (a === undefined) {
      a = { labels: { hook, status: status === null ? 'none' : String(status) }, n: 0 };
      byStatus.set(status, a);
    }
    a.n++;
  };
  const authFailures = new Counter({
    name: 'hookgate_auth_failures_total',
    help: 'Failed authentication attempts (hooks, signatures, gateway token).',
    registers,
  });
  const lockouts = new Counter({
    name: 'hookgate_auth_lockouts_total',
    help: 'Client addresses locked out after repeated authentication failures.',
    registers,
  });
  const turnedAway = new Counter({
    name: 'hookgate_connections_refused_total',
    help: 'Connections turned away: over_capacity (gateway.maxConnections) or too_many_connections (gateway.maxConnectionsPerClient).',
    labelNames: ['reason'],
    registers,
  });
  const closedForNewer = new Counter({
    name: 'hookgate_connections_closed_for_newer_total',
    help: 'Connections closed at gateway.maxConnections to let a newer one in: the oldest that had not sent a complete request, else the one idle longest between requests.',
    registers,
  });
  const openConnections = deps.openConnections;
  new Gauge({
    name: 'hookgate_connections_open',
    help: 'Client connections open now (those turned away not counted).',
    registers,
    collect() {
      this.set(openConnections?.() ?? 0);
    },
  });
  const dispatch = deps.dispatch;
  new Gauge({
    name: 'hookgate_dispatch_holds',
    help: 'Dispatch holds set now (1 each), by scope (all, agent, mapping), key and kind (pause, drain): requests are still accepted.',
    labelNames: ['scope', 'key', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const h of dispatch?.().holds ?? []) this.set({ scope: h.scope, key: h.key, kind: h.kind }, 1);
    },
  });
  new Gauge({
    name: 'hookgate_dispatch_replica_draining',
    help: 'Whether this replica drains (1): it finishes its work in flight and claims nothing new.',
    registers,
    collect() {
      this.set(dispatch?.().draining === true ? 1 : 0);
    },
  });
  const commitSize = new Histogram({
    name: 'hookgate_store_commit_batch_size',
    help: 'Writes per group commit.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'hookgate_store_commit_duration_seconds',
    help: 'Time of one group commit until its writers can be answered (the transaction and its WAL sync or flush).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const commitFailures = new Counter({
    name: 'hookgate_store_commit_failures_total',
    help: 'Group commits that failed.',
    registers,
  });
  const runsFinished = new Counter({
    name: 'hookgate_runs_finished_total',
    help: 'Agent runs that reached a terminal state, by state.',
    labelNames: ['state'],
    registers,
  });
  const runSeconds = new Histogram({
    name: 'hookgate_run_duration_seconds',
    help: 'Agent run time from claim to recorded outcome, by terminal state.',
    labelNames: ['state'],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  });
  const modelCalls = new Counter({
    name: 'hookgate_model_calls_total',
    help: 'Model API calls (each retry counts), by provider, model and outcome.',
    labelNames: ['provider', 'model', 'outcome'],
    registers,
  });
  const modelTokens = new Counter({
    name: 'hookgate_model_tokens_total',
    help: 'Tokens the providers reported, by provider, model and direction (input, output).',
    labelNames: ['provider', 'model', 'direction'],
    registers,
  });
  const deliveries = new Counter({
    name: 'hookgate_delivery_attempts_total',
    help: 'Delivery attempts, by channel and outcome (sent, retry, failed, skipped).',
    labelNames: ['channel', 'outcome'],
    registers,
  });
  const depth = new Gauge({
    name: 'hookgate_queue_depth',
    help: 'Work waiting in the store: runs queued (held: those a budget holds back), running, events and deliveries pending.',
    labelNames: ['queue'],
    registers,
  });
  const oldest = new Gauge({
    name: 'hookgate_queue_oldest_age_seconds',
    help: 'Age of the oldest waiting item per queue (0 when empty).',
    labelNames: ['queue'],
    registers,
  });
  const recordsDropped = new Counter({
    name: 'hookgate_request_records_dropped_total',
    help: 'Records of refused requests not kept: refusals came faster than the request log keeps them.',
    registers,
  });
  const mcpDelivered = new Counter({
    name: 'hookgate_mcp_deliveries_total',
    help: 'Occurrences delivered to MCP Events webhook subscribers (answered 2xx).',
    registers,
  });
  const mcpFailed = new Counter({
    name: 'hookgate_mcp_delivery_failures_total',
    help: 'Failed tries at MCP Events webhook deliveries, by category (http_5xx, timeout, connection_refused, …).',
    labelNames: ['reason'],
    registers,
  });
  const mcpLag = new Histogram({
    name: 'hookgate_mcp_delivery_lag_seconds',
    help: "Time from a hook's receipt to its subscriber's 2xx.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30, 300],
    registers,
  });
  const pruned = new Counter({
    name: 'hookgate_pruned_rows_total',
    help: 'Rows deleted past their retention, by kind.',
    labelNames: ['kind'],
    registers,
  });
  const pruneFailures = new Counter({
    name: 'hookgate_prune_failures_total',
    help: 'Background prune passes that failed.',
    registers,
  });
  const pruneSucceeded = new Gauge({
    name: 'hookgate_prune_last_success_timestamp_seconds',
    help: 'When the last background prune pass ended without an error (Unix time; 0 before the first).',
    registers,
  });
  const size = new Gauge({
    name: 'hookgate_store_size_bytes',
    help: 'Space the store takes on disk, by part (SQLite files or PostgreSQL tables).',
    labelNames: ['part'],
    registers,
  });

  const catchUpPasses = new Counter({
    name: 'hookgate_catch_up_passes_total',
    help: 'Catch-up passes, by mapping and outcome (done, busy: another process held it, failed).',
    labelNames: ['mapping', 'outcome'],
    registers,
  });
  const catchUpEvents = new Counter({
    name: 'hookgate_catch_up_events_total',
    help: 'Missed events a catch-up pass handled, by mapping and outcome (accepted, skipped, refused, duplicate, redelivered).',
    labelNames: ['mapping', 'outcome'],
    registers,
  });
  const catchUpSucceeded = new Gauge({
    name: 'hookgate_catch_up_last_success_timestamp_seconds',
    help: 'When a catch-up pass of the mapping last ended without an error (Unix time).',
    labelNames: ['mapping'],
    registers,
  });

  let sampledAt = -Infinity;
  let sampling: Promise<void> | undefined;
  const refresh = async (): Promise<void> => {
    const now = deps.now();
    if (now - sampledAt < cacheMs) return;
    sampling ??= (async () => {
      try {
        const s = await deps.sample();
        const q = s.queues;
        depth.set({ queue: 'runs_queued' }, q.queuedRuns);
        depth.set({ queue: 'runs_running' }, q.runningRuns);
        depth.set({ queue: 'runs_held' }, q.heldRuns);
        depth.set({ queue: 'events_pending' }, q.pendingEvents);
        depth.set({ queue: 'deliveries_pending' }, q.pendingDeliveries);
        oldest.set({ queue: 'runs' }, age(now, q.oldestQueuedRunAt));
        oldest.set({ queue: 'events' }, age(now, q.oldestPendingEventAt));
        oldest.set({ queue: 'deliveries' }, age(now, q.oldestPendingDeliveryAt));
        size.reset();
        for (const p of s.size.parts) size.set({ part: p.name }, p.bytes);
        sampledAt = now;
      } catch (error) {
        deps.onSampleError?.(error);
      } finally {
        sampling = undefined;
      }
    })();
    await sampling;
  };

  return {
    recordRequest: countAnswered,
    authFailure: () => authFailures.inc(),
    requestRecordDropped: () => recordsDropped.inc(),
    lockout: () => lockouts.inc(),
    connectionTurnedAway: (reason) => turnedAway.inc({ reason }),
    connectionClosedForNewer: () => closedForNewer.inc(),
    store: {
      onCommit(c) {
        commitSize.observe(c.writes);
        commitSeconds.observe(c.seconds);
        if (!c.ok) commitFailures.inc();
      },
    },
    pruner: {
      pruned(counts) {
        for (const [kind, n] of Object.entries(counts)) if (n > 0) pruned.inc({ kind }, n);
      },
      passEnded(ok) {
        if (ok) pruneSucceeded.set(deps.now() / 1000);
        else pruneFailures.inc();
      },
    },
    catchUpPass(p) {
      catchUpPasses.inc({ mapping: p.mappingId, outcome: p.outcome });
      if (p.outcome === 'done') catchUpSucceeded.set({ mapping: p.mappingId }, deps.now() / 1000);
      const counts = {
        accepted: p.accepted,
        skipped: p.skipped,
        refused: p.refused,
        duplicate: p.duplicates,
        redelivered: p.redelivered,
      };
      for (const [outcome, n] of Object.entries(counts)) {
        if (n > 0) catchUpEvents.inc({ mapping: p.mappingId, outcome }, n);
      }
    },
    runFinished(state, seconds) {
      runsFinished.inc({ state });
      if (seconds !== null) runSeconds.observe({ state }, seconds);
    },
    modelCall(provider, model, outcome, usage) {
      const m = modelLabel(model);
      modelCalls.inc({ provider, model: m, outcome });
      if (usage === undefined) return;
      modelTokens.inc({ provider, model: m, direction: 'input' }, usage.inputTokens);
      modelTokens.inc({ provider, model: m, direction: 'output' }, usage.outputTokens);
    },
    deliveryAttempt: (channel, outcome) => deliveries.inc({ channel, outcome }),
    mcpSender: {
      delivered(lagMs) {
        mcpDelivered.inc();
        mcpLag.observe(lagMs / 1000);
      },
      failed: (reason) => mcpFailed.inc({ reason }),
    },
    async render() {
      await refresh();
      return registry.metrics();
    },
    contentType: registry.contentType,
    registry,
  };
}
