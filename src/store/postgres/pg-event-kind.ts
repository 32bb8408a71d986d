/**
 * SQL over a `system_events` row, for digests and the turns that consume them: the same kinds as
 * SQLite's (consumed-marks.ts), one hook and the text's first 40 characters without digits.
 */
const SHAPE_CHARS = 40;

/** The event's hook. */
export const HOOK = "source::jsonb ->> 'hook'";
/** The event's shape: its text without digits, its first 40 characters. */
export const SHAPE = `left(translate(text, '0123456789', ''), ${SHAPE_CHARS})`;
/** An event of a `priority: "high"` mapping, which no kind ever covers. */
export const HIGH = "coalesce(source::jsonb ->> 'priority' = 'high', false)";
