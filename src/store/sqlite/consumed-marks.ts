/**
 * A digest turn consumes a whole backlog, a million events or more. Stamping each of them in the
 * turn's own transaction held the serving thread for seconds (about 3 µs an event), so the turn
 * writes one mark instead: the session's events up to the mark's `seq` count as consumed from that
 * commit on, by every read of pending events, and a background marker stamps them with the turn's
 * `consumed_at` and `consumed_by` in small batches, dropping the mark once none is left under it.
 * A crash in between leaves the mark, and the next start goes on stamping. A digest that showed
 * only some kinds of its backlog writes a filtered mark: only the ordinary events of those kinds
 * (listed in `consumed_mark_kinds`) count as consumed, the rest stay pending under it.
 */
import { HIGH, HOOK, SHAPE } from './consumed-marks-sql.js';
import type { SqliteContext } from './sqlite-context.js';

/** Events a marker batch stamps: a few milliseconds of the writer. */
const STAMP_BATCH = 1000;
/** The pause between batches, so the requests of the moment share the writer. */
const STAMP_PAUSE_MS = 5;
/** The wait before trying again after a batch failed (the store busy or unavailable). */
const RETRY_MS = 1000;

export interface ConsumedMarker {
  /** Starts stamping, unless it is already at work. */
  kick(): void;
  /** Starts stamping if marks were left (by a crash, or a stop in the middle). */
  resume(): void;
  /** Stops after the batch in flight. */
  stop(): Promise<void>;
}

interface MarkRow {
  id: number;
  session_key: string;
  seq: number;
  turn_id: string | null;
  at: number;
  filtered: 0 | 1;
  stamped_seq: number;
}

export function createConsumedMarker(
  { db, write }: Pick<SqliteContext, 'db' | 'write'>,
  batch = STAMP_BATCH,
): ConsumedMarker {
  const oldest = db.prepare(
    'SELECT id, session_key, seq, turn_id, at, filtered, stamped_seq FROM consumed_marks ORDER BY id LIMIT 1',
  );
  const stamp = db.prepare(
    `UPDATE system_events SET consumed_at = @at, consumed_by = @turn WHERE seq IN (SELECT seq FROM system_events
      WHERE session_key = @key AND consumed_at IS NULL AND seq <= @seq ORDER BY seq LIMIT @n)`,
  );
  // The events a filtered mark leaves pending stay unstamped under it: each batch goes on from the
  // last one stamped, so they are passed over once, not at every batch.
  const stampKinds = db.prepare(
    `UPDATE system_events SET consumed_at = @at, consumed_by = @turn WHERE seq IN (SELECT e.seq FROM system_events e
      WHERE e.session_key = @key AND e.consumed_at IS NULL AND e.seq > @from AND e.seq <= @seq AND NOT ${HIGH('e')}
      AND EXISTS (SELECT 1 FROM consumed_mark_kinds k WHERE k.mark_id = @id AND k.hook IS ${HOOK('e')} AND k.shape = ${SHAPE('e')})
      ORDER BY e.seq LIMIT @n) RETURNING seq`,
  );
  const advance = db.prepare('UPDATE consumed_marks SET stamped_seq = ? WHERE id = ?');
  const drop = db.prepare('DELETE FROM consumed_marks WHERE id = ?');
  const dropKinds = db.prepare('DELETE FROM consumed_mark_kinds WHERE mark_id = ?');
  /** One batch; `false` once no mark is left. */
  const step = (): boolean => {
    const m = oldest.get() as MarkRow | undefined;
    if (m === undefined) return false;
    const at = { at: m.at, turn: m.turn_id, key: m.session_key, seq: m.seq, n: batch };
    let done: boolean;
    if (m.filtered === 0) {
      done = stamp.run(at).changes < batch;
    } else {
      const seqs = (stampKinds.all({ ...at, id: m.id, from: m.stamped_seq }) as Array<{ seq: number }>).map(
        (r) => r.seq,
      );
      done = seqs.length < batch;
      if (!done) advance.run(Math.max(...seqs), m.id);
    }
    if (done) {
      drop.run(m.id);
      dropKinds.run(m.id);
    }
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
