/**
 * The scale part: the store's claims and listings beside backlogs of the size the gateway is built
 * to survive, each reported as the call's time and, on SQLite, the longest the event loop stood
 * still during it (a 1 ms ticker), since SQLite's statements run on the serving thread:
 * - a budget starting to hold a mapping with `runs` runs queued in as many sessions: the claims
 *   until every held run is marked;
 * - `runs` runs waiting for their coalescing windows, and one ready run behind them;
 * - `runs` deliveries waiting for their retries (a chat service down);
 * - `rows` finished runs and sent deliveries, 1% failed: listings of the failed ones, and a run's
 *   delivery looked up as a waiting client does;
 * - `rows` request records: a listing filtered by a status none has (and on PostgreSQL, by a rare
 *   one, with and without the index of unusual statuses);
 * - PostgreSQL only: an auth failure with `runs` addresses failing in the window, and a prune
 *   batch over `rows` events of which none is due.
 * PostgreSQL at HOOKGATE_TEST_POSTGRES_URL; skipped, saying so, when it cannot be reached.
 *
 * Env: BENCH_SCALE_RUNS (100000), BENCH_SCALE_ROWS (1000000).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createIds } from '../src/common/ids.js';
import { StoreSchema, type StoreConfig } from '../src/config/index.js';
import { createStore, pruneCutoffs, type NewRun, type Store } from '../src/store/index.js';
import { RequestBatchBuilder } from '../src/store/sqlite/request-batch.js';
import { envNumber, log } from './bench-env.js';
import type { BenchContext } from './ingress-bench.js';

const POSTGRES_URL = process.env['HOOKGATE_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const HOUR = 3_600_000;

export const scaleSettings = () => ({
  runs: Math.floor(envNumber('BENCH_SCALE_RUNS', 100_000, 100)),
  rows: Math.floor(envNumber('BENCH_SCALE_ROWS', 1_000_000, 1000)),
});
export type ScaleSettings = ReturnType<typeof scaleSettings>;
export const scaleBudgetS = (s: ScaleSettings): number => 300 + s.runs / 200 + s.rows / 5000;

type Driver = 'sqlite' | 'postgres';
interface Timed<T> {
  value: T;
  ms: number;
  stopMs: number;
}

/** Runs `fn`, timing it and the longest the event loop stood still meanwhile. */
async function timed<T>(fn: () => Promise<T>): Promise<Timed<T>> {
  let last = performance.now();
  let stopMs = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    stopMs = Math.max(stopMs, t - last);
    last = t;
  }, 1);
  const t0 = performance.now();
  try {
    const value = await fn();
    const ms = performance.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 3));
    return { value, ms, stopMs: Math.max(stopMs, performance.now() - last) };
  } finally {
    clearInterval(tick);
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const f1 = (x: number): string => x.toFixed(1);
const source = (hook: string) => ({ hook, external: true, allowUnsafeExternalContent: false });

/** A place for one scenario's store: a fresh SQLite file, or a fresh PostgreSQL schema; and raw SQL on it. */
interface Place {
  config: StoreConfig;
  sql(text: string): Promise<void>;
  dispose(): Promise<void>;
}

export async function runScaleBench(ctx: BenchContext, s: ScaleSettings): Promise<boolean> {
  log(
    `scale part: ${s.runs.toLocaleString('en-US')} runs, deliveries or addresses; ${s.rows.toLocaleString('en-US')} rows of history`,
  );
  let pgError: string | null = null;
  try {
    const c = new pg.Client({ connectionString: POSTGRES_URL });
    await c.connect();
    await c.end();
  } catch (error) {
    pgError = (error as Error).message;
  }
  let n = 0;
  const place = async (driver: Driver): Promise<Place> => {
    n++;
    if (driver === 'sqlite') {
      const path = join(ctx.root, `scale-${n}.db`);
      return {
        config: StoreSchema.parse({ driver: 'sqlite', path, sync: 'normal' }),
        async sql(text) {
          const db = new Database(path);
          try {
            db.prepare(text).run();
          } finally {
            db.close();
          }
        },
        dispose: async () => undefined,
      };
    }
    const schema = `hg_scale_${ctx.runId}_${n}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    return {
      config: StoreSchema.parse({ driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4 }),
      async sql(text) {
        await client.query(`SET search_path = ${schema}`);
        await client.query(text);
      },
      async dispose() {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      },
    };
  };
  /** Copies the one row of `table` `count` times, with `over` (SQL over `g`, 1…count) for some columns. */
  const clone = async (
    p: Place,
    driver: Driver,
    table: string,
    count: number,
    over: Record<string, string>,
  ): Promise<void> => {
    const columns =
      driver === 'sqlite'
        ? `SELECT name FROM pragma_table_info('${table}') WHERE name <> 'seq'`
        : `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${table}' AND column_name <> 'seq'`;
    let names: string[] = [];
    if (driver === 'sqlite') {
      const db = new Database((p.config as { path: string }).path, { readonly: true });
      names = (db.prepare(columns).all() as Array<{ name: string }>).map((r) => r.name);
      db.close();
    } else {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`SET search_path = ${(p.config as { schema: string }).schema}`);
      names = ((await c.query(columns)).rows as Array<{ name: string }>).map((r) => r.name);
      await c.end();
    }
    const series =
      driver === 'sqlite'
        ? `(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ${count}) SELECT g FROM s)`
        : `generate_series(1, ${count})`;
    await p.sql(`INSERT INTO ${table} (${names.join(', ')}) SELECT ${names.map((c) => over[c] ?? `t0.${c}`).join(', ')}
      FROM (SELECT * FROM ${table} LIMIT 1) t0, ${series} AS gs${driver === 'sqlite' ? '' : '(g)'}`);
  };
  const ids = createIds();
  const run = (session: string, hook: string, at: number, coalesce?: { key: string; windowMs: number }): NewRun => ({
    id: ids.next(),
    agentId: 'main',
    sessionKey: session,
    message: 'm',
    name: hook,
    wakeMode: 'now',
    deliver: false,
    channel: 'last',
    to: null,
    model: null,
    thinking: null,
    timeoutSeconds: 30,
    source: source(hook),
    createdAt: at,
    ...(coalesce === undefined ? {} : { coalesce }),
  });
  const enqueueMany = async (store: Store, count: number, make: (i: number) => NewRun): Promise<void> => {
    for (let i = 0; i < count; i += 1000) {
      await Promise.all(Array.from({ length: Math.min(1000, count - i) }, (_, j) => store.enqueueRun(make(i + j))));
    }
  };
  const withStore = async (driver: Driver, body: (store: Store, p: Place) => Promise<void>): Promise<void> => {
    const p = await place(driver);
    const store = await createStore(p.config, { mode: 'serve' });
    try {
      await body(store, p);
    } finally {
      await store.close();
      await p.dispose();
    }
  };
  const drivers: Driver[] = pgError === null ? ['sqlite', 'postgres'] : ['sqlite'];
  if (pgError !== null) log(`  PostgreSQL scenarios SKIPPED: not reachable at ${POSTGRES_URL} (${pgError})`);
  const claim = (store: Store, budgets?: Parameters<Store['claimRuns']>[0]['budgets']) =>
    store.claimRuns({ owner: 'bench', limit: 4, leaseMs: HOUR, ...(budgets === undefined ? {} : { budgets }) });

  for (const driver of drivers) {
    await withStore(driver, async (store) => {
      await enqueueMany(store, s.runs, (i) => run(`hook:h${i}`, 'flood', Date.now()));
      const budgets = { agents: {}, hooks: { flood: { runsPerHour: 1 } } };
      const claims: Timed<unknown>[] = [];
      for (let k = 0; k < 2000; k++) {
        claims.push(await timed(() => claim(store, budgets)));
        if ((await store.readQueueStats()).heldRuns >= s.runs - 1) break;
      }
      log(
        `  ${driver}: a budget holding ${s.runs.toLocaleString('en-US')} queued runs: marked over ${claims.length} claims, median ${f1(median(claims.map((c) => c.ms)))} ms, longest ${f1(Math.max(...claims.map((c) => c.ms)))} ms; longest stop ${f1(Math.max(...claims.map((c) => c.stopMs)))} ms`,
      );
    });
    await withStore(driver, async (store) => {
      await enqueueMany(store, s.runs, (i) => run(`hook:r${i}`, 'flood', Date.now()));
      const series = async (count: number, budgets?: Parameters<typeof claim>[1]): Promise<number> => {
        const claims: Timed<unknown>[] = [];
        for (let k = 0; k < count; k++) claims.push(await timed(() => claim(store, budgets)));
        return median(claims.map((c) => c.ms));
      };
      const plain = await series(20);
      const budgets = { agents: {}, hooks: { other: { maxConcurrentRuns: 1 } } };
      // The first claims under budgets mark the runs queued since the last marking, 2,000 a claim.
      const marking = await series(Math.ceil(s.runs / 2000) + 5, budgets);
      const budgeted = await series(20, budgets);
      log(
        `  ${driver}: ${s.runs.toLocaleString('en-US')} runs ready in as many sessions: a claim of 4 ${f1(plain)} ms without budgets, ${f1(budgeted)} ms with a budget on another mapping (medians of 20; the claims before, which mark the runs queued since the last: ${f1(marking)} ms)`,
      );
    });
    await withStore(driver, async (store) => {
      await enqueueMany(store, s.runs, (i) => run(`hook:c${i}`, 'burst', Date.now(), { key: `k${i}`, windowMs: HOUR }));
      await store.enqueueRun(run('hook:plain', 'plain', Date.now()));
      const claims: Timed<unknown>[] = [];
      for (let k = 0; k < 5; k++) claims.push(await timed(() => claim(store)));
      log(
        `  ${driver}: ${s.runs.toLocaleString('en-US')} runs in their coalescing windows: a claim ${f1(median(claims.map((c) => c.ms)))} ms (median of 5), longest stop ${f1(Math.max(...claims.map((c) => c.stopMs)))} ms`,
      );
    });
    await withStore(driver, async (store, p) => {
      await store.addDelivery({
        id: ids.next(),
        agentId: 'main',
        channel: 'telegram',
        to: '42',
        text: 'hi',
        runId: null,
        createdAt: Date.now(),
      });
      await clone(p, driver, 'deliveries', s.runs - 1, { id: `'d' || g` });
      await p.sql(`UPDATE deliveries SET next_attempt_at = ${Date.now() + HOUR}, attempts = 1`);
      const claims: Timed<unknown>[] = [];
      for (let k = 0; k < 5; k++)
        claims.push(
          await timed(() => store.claimDueDeliveries({ owner: 'bench', now: Date.now(), limit: 4, leaseMs: HOUR })),
        );
      log(
        `  ${driver}: ${s.runs.toLocaleString('en-US')} deliveries waiting for their retries: a claim ${f1(median(claims.map((c) => c.ms)))} ms (median of 5), longest stop ${f1(Math.max(...claims.map((c) => c.stopMs)))} ms`,
      );
    });
  }

  await withStore('sqlite', async (store, p) => {
    await store.enqueueRun(run('hook:x', 'x', Date.now()));
    await store.addDelivery({
      id: ids.next(),
      agentId: 'main',
      channel: 'telegram',
      to: '42',
      text: 'hi',
      runId: null,
      createdAt: Date.now(),
    });
    await clone(p, 'sqlite', 'runs', s.rows, {
      id: `'r' || g`,
      state: `CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'succeeded' END`,
    });
    await clone(p, 'sqlite', 'deliveries', s.rows, {
      id: `'d' || g`,
      state: `CASE WHEN g % 100 = 0 THEN 'failed' ELSE 'sent' END`,
      run_id: `'r' || g`,
    });
    const runs = await timed(() => store.listRuns({ state: 'failed', limit: 100 }));
    const deliveries = await timed(() => store.listDeliveries({ state: 'failed', limit: 100 }));
    const look = await timed(() => store.getRunDelivery('r-none'));
    log(
      `  sqlite: ${s.rows.toLocaleString('en-US')} finished runs and deliveries: 100 failed runs listed in ${f1(runs.ms)} ms, deliveries ${f1(deliveries.ms)} ms; a run's delivery looked up in ${f1(look.ms)} ms`,
    );
  });
  await withStore('sqlite', async (store, p) => {
    const db = new Database((p.config as { path: string }).path);
    const insert =
      db.prepare(`INSERT INTO request_batches (min_id, max_id, upto_id, min_at, max_at, count, records, statuses, hooks)
      VALUES (@min_id, @max_id, @max_id, @min_at, @max_at, @count, @records, @statuses, @hooks)`);
    db.transaction(() => {
      for (let i = 0; i < s.rows; i += 20) {
        const b = new RequestBatchBuilder();
        for (let j = 0; j < 20; j++) {
          b.add({
            id: ids.next(),
            at: Date.now(),
            method: 'POST',
            path: '/hooks/wake',
            hook: 'wake',
            client: '127.0.0.1',
            status: 200,
            code: null,
            reason: null,
            durationMs: 0.4,
            eventIds: [],
            runIds: [],
            payload: null,
            headers: null,
          });
        }
        insert.run(b.build());
      }
    })();
    db.close();
    const first = await timed(() => store.listRequests({ status: 500, limit: 50 }));
    const again = await timed(() => store.listRequests({ status: 500, limit: 50 }));
    log(
      `  sqlite: ${s.rows.toLocaleString('en-US')} request records: a listing filtered by a status none has ${f1(again.ms)} ms, longest stop ${f1(again.stopMs)} ms (the first: ${f1(first.ms)} ms, stop ${f1(first.stopMs)} ms)`,
    );
  });

  if (pgError === null) {
    await withStore('postgres', async (store, p) => {
      await store.recordAuthFailure({ client: 'seed', windowMs: 60_000, maxFailures: 10, lockoutMs: 60_000 });
      await clone(p, 'postgres', 'auth_failures', s.runs, { client: `'a' || g` });
      const failures: Timed<unknown>[] = [];
      for (let k = 0; k < 50; k++)
        failures.push(
          await timed(() =>
            store.recordAuthFailure({ client: `x${k}`, windowMs: 60_000, maxFailures: 10, lockoutMs: 60_000 }),
          ),
        );
      log(
        `  postgres: ${s.runs.toLocaleString('en-US')} addresses failing within the window: an auth failure ${f1(median(failures.map((f) => f.ms)))} ms (median of 50)`,
      );
    });
    await withStore('postgres', async (store, p) => {
      await store.addSystemEvent({
        id: ids.next(),
        agentId: 'main',
        sessionKey: 'agent:main:main',
        text: 'e',
        mode: 'next-heartbeat',
        source: source('wake'),
        createdAt: Date.now(),
      });
      await clone(p, 'postgres', 'system_events', s.rows, { id: `'e' || g`, consumed_at: String(Date.now()) });
      await p.sql(`ANALYZE system_events`);
      const cutoffs = pruneCutoffs(
        { events: '30d', runs: '30d', deliveries: '30d', transcript: '30d', requests: '7d', eventLog: '7d' },
        Date.now(),
      );
      const batches: Timed<unknown>[] = [];
      for (let k = 0; k < 3; k++) batches.push(await timed(() => store.prune(cutoffs, 100)));
      log(
        `  postgres: ${s.rows.toLocaleString('en-US')} events, none due: a prune batch ${batches.map((b) => f1(b.ms)).join(' / ')} ms (the first finds the bounds)`,
      );
    });
    await withStore('postgres', async (store, p) => {
      await store.recordRequest({
        id: ids.next(),
        at: Date.now(),
        method: 'POST',
        path: '/hooks/wake',
        hook: 'wake',
        client: '127.0.0.1',
        status: 200,
        code: null,
        reason: null,
        durationMs: 0.4,
        eventIds: [],
        runIds: [],
        payload: null,
        headers: null,
      });
      // One in 50,000 refused (401), the rest answered.
      await clone(p, 'postgres', 'requests', s.rows, {
        id: `'q' || g`,
        status: `CASE WHEN g % 50000 = 0 THEN 401 ELSE 200 END`,
      });
      await p.sql('ANALYZE requests');
      const listings = async (): Promise<string> => {
        const none = await timed(() => store.listRequests({ status: 500, limit: 50 }));
        const rare = await timed(() => store.listRequests({ status: 401, limit: 50 }));
        const again = await timed(() => store.listRequests({ status: 500, limit: 50 }));
        return `a status none has ${f1(again.ms)} ms (the first: ${f1(none.ms)} ms), the ${rare.value.length} refused ${f1(rare.ms)} ms`;
      };
      const indexed = await listings();
      // The same listings as they were before the index of unusual statuses, for comparison.
      await p.sql('DROP INDEX requests_unusual');
      const scanned = await listings();
      log(
        `  postgres: ${s.rows.toLocaleString('en-US')} request records listed by status: ${indexed}; without requests_unusual: ${scanned}`,
      );
    });
  }
  return true;
}
