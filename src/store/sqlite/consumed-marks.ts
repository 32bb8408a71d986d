/**
 * A digest turn consumes a whole backlog, a million events or more. Stamping each of them in the
 * turn's own transaction held the serving thread for seconds (about 3 µs an event), so the turn
 * writes one mark instead: the session's events up to the mark's `seq` count as consumed from that
 * commit on, by every read of pending events, and a background marker stamps them with the turn's
 * `consumed_at` and `consumed_by` in small batches, dropping the mark once none is left under it.
 * A crash in between leaves the mark, and the next start goes on stamping.
 */
import type { SqliteContext } from './sqlite-context.js';

/** Events a marker batch stamps: a few milliseconds of the writer. */
export const STAMP_BATCH = 1000;
/** The pause between batches, so the requests of the moment share the writer. */
const STAMP_PAUSE_MS = 5;
/** The wait before trying again after a batch failed (the store busy or unavailable). */
const RETRY_MS = 1000;

/** SQL: the `seq` of `session`'s newest mark, 0 when it has none. */
export const markOf = (session: string): string =>
  `coalesce((SELECT max(m.seq) FROM consumed_marks m WHERE m.session_key = ${session}), 0)`;

/**
 * SQL: an unstamped event (`e`) is pending: no mark of its session covers it. Given the session
 * (a parameter, or an outer query's column), the mark is read once and bounds the index range.
 */
export const PENDING = (e: string, session = `${e}.session_key`): string =>
  `${e}.consumed_at IS NULL AND ${e}.seq > ${markOf(session)}`;

/** SQL: the column `col` (`at` or `turn_id`) of the oldest mark covering an unstamped event (`e`). */
const fromMark = (e: string, col: string): string =>
  `(SELECT m.${col} FROM consumed_marks m WHERE m.session_key = ${e}.session_key AND m.seq >= ${e}.seq ORDER BY m.seq LIMIT 1)`;

/** SQL: an event row (`e`) as it reads once its mark is stamped. */
export const EVENT_COLUMNS = (e: string): string =>
  `${e}.seq, ${e}.id, ${e}.agent_id, ${e}.session_key, ${e}.text, ${e}.mode, ${e}.source, ${e}.created_at,
    coalesce(${e}.consumed_at, ${fromMark(e, 'at')}) AS consumed_at, coalesce(${e}.consumed_by, ${fromMark(e, 'turn_id')}) AS consumed_by`;

export interface ConsumedMarker {
  /** Starts stamping, unless it is already at work. */
  kick(): void;
  /** Starts stamping if marks were left (by a crash, or a stop in the middle). */
  resume(): void;
  /** Stops after the batch in flight. */
  stop(): Promise<void>;
}

interface MarkRow {
  session_key: string;
  seq: number;
  turn_id: string | null;
  at: number;
}

export function createConsumedMarker(
  { db, write }: Pick<SqliteContext, 'db' | 'write'>,
  batch = STAMP_BATCH,
): ConsumedMarker {
  const oldest = db.prepare('SELECT session_key, seq, turn_id, at FROM consumed_marks ORDER BY seq LIMIT 1');
  const stamp = db.prepare(
    `UPDATE system_events SET consumed_at = @at, consumed_by = @turn WHERE seq IN (SELECT seq FROM system_events
      WHERE session_key = @key AND consumed_at IS NULL AND seq <= @seq ORDER BY seq LIMIT @n)`,
  );
  const drop = db.prepare('DELETE FROM consumed_marks WHERE session_key = ? AND seq = ?');
  /** One batch; `false` once no mark is left. */
  const step = (): boolean => {
    const m = oldest.get() as MarkRow | undefined;
    if (m === undefined) return false;
    const n = stamp.run({ at: m.at, turn: m.turn_id, key: m.session_key, seq: m.seq, n: batch }).changes;
    if (n < batch) drop.run(m.session_key, m.seq);
    return true;
  };
  let stopped = false;
  let running: Promise<void> | null = null;
  let retry: NodeJS.Timeout | undefined;
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  const loop = async (): Promise<void> => {
    while (!stopped && (await write(step))) await pause(STAMP_PAUSE_MS);
  };
  /** A mark written while the loop was ending its last look. */
  let again = false;
  const kick = (): void => {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    again = false;
    running = loop()
      .catch(() => {
        // The marks stay; stamping goes on once the store writes again.
        if (!stopped) retry = setTimeout(kick, RETRY_MS).unref();
      })
      .finally(() => {
        running = null;
        if (again) kick();
      });
  };
  return {
    kick,
    resume() {
      if (oldest.get() !== undefined) kick();
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await running;
    },
  };
}
