import type { Database, Statement } from 'better-sqlite3';

/** Distinct limits kept prepared per statement; past it a statement is prepared for its one run. */
const MAX_KEPT = 64;

/**
 * A statement whose `LIMIT` (or `OFFSET`) values are written into its text, prepared once per
 * value. SQLite prepares a statement that binds its `LIMIT` again at every run, whatever the value
 * (it may plan by it; the bound value marks the plan as stale): a claim's candidate read took
 * 47 µs, 39 of them preparing it. The values are whole numbers from the store's own code (a
 * claim's free slots, a listing's page), so there are few of them.
 */
export function limitedStatements(
  db: Database,
  sql: (...limits: number[]) => string,
): (...limits: number[]) => Statement {
  const kept = new Map<string, Statement>();
  return (...limits) => {
    const key = limits.join(',');
    let statement = kept.get(key);
    if (statement !== undefined) return statement;
    for (const n of limits) {
      if (!Number.isSafeInteger(n)) throw new RangeError(`a statement limit must be a whole number, got ${n}`);
    }
    statement = db.prepare(sql(...limits));
    if (kept.size < MAX_KEPT) kept.set(key, statement);
    return statement;
  };
}
