/**
 * The retention part: a million wakes stored and consumed (as heartbeat turns would), then pruned
 * past their window; the SQLite file's size before and after, and after a second million, to show
 * the freed pages are reused (the file stops growing under constant load).
 *
 * Env: BENCH_RETENTION_WAKES (1000000).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createIds } from '../src/common/ids.js';
import { createLog } from '../src/common/log.js';
import { StoreSchema } from '../src/config/index.js';
import { createPruner, createStore, type Store } from '../src/store/index.js';
import { envNumber, log } from './bench-env.js';
import type { BenchContext } from './ingress-bench.js';

const DAY = 86_400_000;
const BATCH = 5_000;

export const retentionSettings = () => ({ wakes: Math.floor(envNumber('BENCH_RETENTION_WAKES', 1_000_000, 1000)) });
export type RetentionSettings = ReturnType<typeof retentionSettings>;
export const retentionBudgetS = (s: RetentionSettings): number => 60 + s.wakes / 2000;

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** Stores `count` wakes created and consumed at `at`, in batches (one heartbeat lease per batch). */
async function fill(store: Store, count: number, at: number, label: string): Promise<void> {
  const ids = createIds(() => at);
  const source = { hook: 'wake', external: true, allowUnsafeExternalContent: false };
  for (let done = 0; done < count; done += BATCH) {
    const events = Array.from({ length: Math.min(BATCH, count - done) }, (_, i) => ({
      id: ids.next(),
      agentId: 'main',
      sessionKey: 'agent:main:main',
      mode: 'next-heartbeat' as const,
      createdAt: at,
      source,
      text: `${label} wake ${done + i}: New email from alerts@example.com about order ${done + i}`,
    }));
    await store.recordActions({ events, runs: [], idempotency: null });
    const claim = (await store.claimHeartbeat({ agentId: 'main', owner: 'bench', leaseMs: 60_000 }))!;
    await store.recordHeartbeatTurn({
      claimId: claim.claimId,
      sessionKey: 'agent:main:main',
      agentId: 'main',
      consumedEventIds: events.map((e) => e.id),
      transcript: [],
      delivery: null,
      at,
    });
    await store.releaseHeartbeat(claim);
  }
}

export async function runRetentionBench(ctx: BenchContext, s: RetentionSettings): Promise<boolean> {
  const path = join(ctx.root, 'retention.db');
  const bytes = (ext: string): number => statSync(`${path}${ext}`, { throwIfNoEntry: false })?.size ?? 0;
  const size = (): string => `database ${mb(bytes(''))} + WAL ${mb(bytes('-wal'))}`;
  let now = Date.now() - 40 * DAY;
  const clock = { now: () => now, sleep: async () => undefined };
  const store = await createStore(StoreSchema.parse({ driver: 'sqlite', path, sync: ctx.sync }), {
    mode: 'serve',
    clock,
  });
  const retention = StoreSchema.parse({ driver: 'sqlite' }).retention;
  const pruner = createPruner({ store, retention, clock, log: createLog({ level: 'silent' }) });
  try {
    log(
      `retention part: ${s.wakes.toLocaleString('en-US')} wakes stored and consumed, then pruned 30 days later (SQLite, sync=${ctx.sync})`,
    );
    let t0 = performance.now();
    await fill(store, s.wakes, now, 'first');
    log(`  stored and consumed in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${size()}`);
    now += 31 * DAY;
    t0 = performance.now();
    const pruned = await pruner.pruneAll();
    log(
      `  pruned ${pruned.events.toLocaleString('en-US')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s (batches of 500): ${size()}`,
    );
    await fill(store, s.wakes, now, 'second');
    log(`  a second ${s.wakes.toLocaleString('en-US')} stored into the freed pages: ${size()}`);
    const left = (await store.listSystemEvents({ limit: 1 })).length;
    return pruned.events === s.wakes && left === 1;
  } finally {
    await store.close();
  }
}
