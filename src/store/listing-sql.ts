import type { DeliveryState, RunState } from './types.js';

/**
 * The states of each listed table, in groups that each have an index of their own on SQLite (a
 * partial one over `(state, seq)` or `(seq)`): runs queued or running (`runs_open`) and finished
 * (`runs_finished`); deliveries pending (`deliveries_pending`) and done (`deliveries_done`).
 * PostgreSQL has one `(state, seq)` index a table.
 */
const GROUPS = {
  runs: [
    ['queued', 'running'],
    ['succeeded', 'failed', 'timed_out'],
  ] as ReadonlyArray<readonly RunState[]>,
  deliveries: [['pending'], ['sent', 'failed', 'skipped']] as ReadonlyArray<readonly DeliveryState[]>,
};

export type ListedTable = keyof typeof GROUPS;

/**
 * SQL (either store) for a listing of `table`, newest first, of one state or of all, with the limit
 * as the query's one parameter (`limit`: `?` or `$1`). The state is written into the text, beside
 * its group's condition, so SQLite matches the partial index for it: with a parameter
 * (`@state IS NULL OR state = @state`) it used none, and a listing of failed runs read through a
 * million finished ones on every refresh of the dashboard (100 ms of the serving thread). `null`
 * for a state the table does not have: nothing is listed.
 */
export function listingSql(table: ListedTable, state: string | undefined, limit: string): string | null {
  if (state === undefined) return `SELECT * FROM ${table} ORDER BY seq DESC LIMIT ${limit}`;
  const group = GROUPS[table].find((g) => (g as readonly string[]).includes(state));
  if (group === undefined) return null;
  const within = group.length === 1 ? '' : `state IN (${group.map((s) => `'${s}'`).join(', ')}) AND `;
  return `SELECT * FROM ${table} WHERE ${within}state = '${state}' ORDER BY seq DESC LIMIT ${limit}`;
}
