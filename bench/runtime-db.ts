/** Read-only look into a running gateway's SQLite store: how far the runs are, and their timings. */
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { percentile } from './load-result.js';
import type { Child } from './proc.js';

export interface RunStats {
  total: number;
  byState: Record<string, number>;
  /** First `created_at` to last `finished_at` of finished runs, ms. */
  spanMs: number;
  /** `finished_at - created_at` (accept to done), ms. */
  latencyP50: number;
  latencyP99: number;
  /** `finished_at - started_at` (claim to done), ms. */
  execP50: number;
  execP99: number;
}

export class RunsDb {
  readonly #db: Database.Database;
  readonly #open: Database.Statement;
  readonly #finished: Database.Statement;
  readonly #notSucceeded: Database.Statement;
  readonly #all: Database.Statement;

  constructor(path: string) {
    // WAL: reads see committed transactions and never block the gateway's writer.
    this.#db = new Database(path, { readonly: true, fileMustExist: true });
    this.#open = this.#db.prepare("SELECT COUNT(*) AS n FROM runs WHERE state IN ('queued', 'running')");
    this.#finished = this.#db.prepare(
      "SELECT (SELECT COUNT(*) FROM runs) - (SELECT COUNT(*) FROM runs WHERE state IN ('queued', 'running')) AS n",
    );
    this.#notSucceeded = this.#db.prepare(
      "SELECT COUNT(*) AS n FROM runs WHERE state NOT IN ('queued', 'running', 'succeeded')",
    );
    this.#all = this.#db.prepare('SELECT COUNT(*) AS n FROM runs');
  }

  /** Runs still queued or running (uses the `runs_open` partial index). */
  openRuns(): number {
    return (this.#open.get() as { n: number }).n;
  }

  /** Runs no longer queued or running, whatever their outcome. */
  countFinished(): number {
    return (this.#finished.get() as { n: number }).n;
  }

  /** Runs that ended other than `succeeded` (failed, timed out). */
  countNotSucceeded(): number {
    return (this.#notSucceeded.get() as { n: number }).n;
  }

  countAll(): number {
    return (this.#all.get() as { n: number }).n;
  }

  stats(): RunStats {
    const byState: Record<string, number> = {};
    let total = 0;
    for (const r of this.#db.prepare('SELECT state, COUNT(*) AS n FROM runs GROUP BY state').all() as Array<{
      state: string;
      n: number;
    }>) {
      byState[r.state] = r.n;
      total += r.n;
    }
    const rows = this.#db
      .prepare('SELECT created_at AS c, started_at AS s, finished_at AS f FROM runs WHERE finished_at IS NOT NULL')
      .all() as Array<{ c: number; s: number | null; f: number }>;
    const latency = new Float64Array(rows.length);
    const exec = new Float64Array(rows.length);
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    rows.forEach((r, i) => {
      latency[i] = r.f - r.c;
      exec[i] = r.f - (r.s ?? r.c);
      first = Math.min(first, r.c);
      last = Math.max(last, r.f);
    });
    latency.sort();
    exec.sort();
    return {
      total,
      byState,
      spanMs: rows.length === 0 ? 0 : last - first,
      latencyP50: percentile(latency, 0.5),
      latencyP99: percentile(latency, 0.99),
      execP50: percentile(exec, 0.5),
      execP99: percentile(exec, 0.99),
    };
  }

  /** Polls until `expected` runs exist and none is open; throws if the gateway dies or time runs out. */
  async waitAllFinished(expected: number, gateway: Child, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (gateway.hasExited())
        throw new Error(`gateway exited (${await gateway.exited}) with runs open:\n${gateway.output()}`);
      if (this.openRuns() === 0 && this.countAll() >= expected) return;
      if (performance.now() > deadline) {
        throw new Error(`runs not finished within ${timeoutMs} ms: ${JSON.stringify(this.stats().byState)}`);
      }
      await sleep(50);
    }
  }

  close(): void {
    this.#db.close();
  }
}
