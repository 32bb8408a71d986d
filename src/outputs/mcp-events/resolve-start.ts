import type { EventLog, LogPosition } from '../../store/index.js';
import { decodeCursor } from './cursor.js';
import type { EventArguments } from './event-catalog.js';
import { invalidParam } from './mcp-error.js';

/** Where delivery (or a poll) starts, and whether that skipped anything the client asked for. */
interface Start {
  /** Occurrences after this position are delivered. */
  after: number;
  /** Something after the client's cursor will not be delivered (retention, `maxAgeMs`, a foreign cursor). */
  truncated: boolean;
  position: LogPosition;
}

/** A non-negative integer number of milliseconds, or absent. */
export function parseMaxAgeMs(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0)
    throw invalidParam('maxAgeMs', 'must be a non-negative integer (milliseconds)');
  return raw;
}

/**
 * Resolves a client's cursor against the log: `null` is "from now" (the safe head); a cursor is
 * resumed exactly after, unless retention pruned past it (then from the pruned mark), it is not
 * this log's (ahead of the head: from now), or `maxAgeMs` puts the floor later (then from the
 * floor). `truncated` is set only when an occurrence of this subscription was skipped, or may have
 * been (pruned ones cannot be told apart).
 */
export async function resolveStart(
  log: EventLog,
  q: { cursor: unknown; maxAgeMs: number | null; name: string; args: EventArguments; now: number },
): Promise<Start> {
  const position = await log.readLogPosition();
  if (q.cursor === undefined || q.cursor === null) return { after: position.head, truncated: false, position };
  if (typeof q.cursor !== 'string') throw invalidParam('cursor', 'must be a string or null');
  const seq = decodeCursor(q.cursor);
  if (seq === null) throw invalidParam('cursor', 'is not a cursor this server issued');
  if (seq > position.head) return { after: position.head, truncated: true, position };
  let after = seq;
  let truncated = false;
  if (after < position.prunedThrough) {
    after = position.prunedThrough;
    truncated = true;
  }
  if (q.maxAgeMs !== null) {
    const floor = Math.min(position.head, await log.findLogSeqBefore(q.now - q.maxAgeMs, q.now));
    if (floor > after) {
      const skipped = await log.readLogEvents({ name: q.name, after, through: floor, limit: 1, ...q.args });
      if (skipped.length > 0) truncated = true;
      after = floor;
    }
  }
  return { after, truncated, position };
}
