/**
 * The SQL of consumed marks (see `consumed-marks.ts`): which events a session's marks count as
 * consumed, and how an event row reads once its mark is stamped.
 */

/** Events are alike when they come from one hook and open with the same words, numbers aside. */
const SHAPE_CHARS = 40;

/** SQL: an event's (`e`) hook. */
export const HOOK = (e: string): string => `json_extract(${e}.source, '$.hook')`;
/** SQL: an event's (`e`) shape: its text without digits, its first 40 characters. */
export const SHAPE = (e: string): string =>
  `substr(${[...'0123456789'].reduce((sql, d) => `replace(${sql}, '${d}', '')`, `${e}.text`)}, 1, ${SHAPE_CHARS})`;
/** SQL: an event (`e`) of a `priority: "high"` mapping, which no kind ever covers. */
export const HIGH = (e: string): string => `json_extract(${e}.source, '$.priority') IS 'high'`;

/** SQL: the `seq` of `session`'s newest mark of the given sort (filtered or not), 0 when it has none. */
const markOf = (session: string, filtered: 0 | 1): string =>
  `coalesce((SELECT max(m.seq) FROM consumed_marks m WHERE m.session_key = ${session} AND m.filtered = ${filtered}), 0)`;

/** SQL: an event (`e`) of a kind that a filtered mark of `session` at or above it consumed. */
const coveredByKind = (e: string, session: string): string =>
  `NOT ${HIGH(e)} AND EXISTS (SELECT 1 FROM consumed_mark_kinds k WHERE k.session_key = ${session}
    AND k.hook IS ${HOOK(e)} AND k.shape = ${SHAPE(e)} AND k.mark_seq >= ${e}.seq)`;

/**
 * SQL: an unstamped event (`e`) is pending: no whole mark of its session covers it, nor a filtered
 * one of its kind. Given the session (a parameter, or an outer query's column), each mark's `seq`
 * is read once: the whole one bounds the index range, and only events under a filtered one (there
 * is none at all unless a digest left kinds pending) are matched against its kinds.
 */
export const PENDING = (e: string, session = `${e}.session_key`): string =>
  `${e}.consumed_at IS NULL AND ${e}.seq > ${markOf(session, 0)}
    AND NOT (${e}.seq <= ${markOf(session, 1)} AND ${coveredByKind(e, session)})`;

/** SQL: the column `col` (`at` or `turn_id`) of the first mark written that covers an unstamped event (`e`). */
const fromMark = (e: string, col: string): string =>
  `(SELECT m.${col} FROM consumed_marks m WHERE m.session_key = ${e}.session_key AND m.seq >= ${e}.seq
    AND (m.filtered = 0 OR (NOT ${HIGH(e)} AND EXISTS (SELECT 1 FROM consumed_mark_kinds k WHERE k.mark_id = m.id
      AND k.hook IS ${HOOK(e)} AND k.shape = ${SHAPE(e)})))
    ORDER BY m.id LIMIT 1)`;

/** SQL: an event row (`e`) as it reads once its mark is stamped. */
export const EVENT_COLUMNS = (e: string): string =>
  `${e}.seq, ${e}.id, ${e}.agent_id, ${e}.session_key, ${e}.text, ${e}.mode, ${e}.source, ${e}.created_at,
    coalesce(${e}.consumed_at, ${fromMark(e, 'at')}) AS consumed_at, coalesce(${e}.consumed_by, ${fromMark(e, 'turn_id')}) AS consumed_by`;
