import type { RequestRecord } from '../request-record.js';
import type { RequestLog } from '../store.js';
import type { PgGroupCommit } from './create-pg-group-commit.js';
import type { PgContext } from './pg-context.js';

interface RequestRow {
  id: string;
  at: string;
  method: string;
  path: string;
  hook: string | null;
  client: string;
  status: number;
  code: string | null;
  reason: string | null;
  duration_ms: number;
  event_ids: string[];
  run_ids: string[];
  payload: string | null;
}

const DEFAULT_LIMIT = 20;

const toRecord = (r: RequestRow): RequestRecord => ({
  id: r.id, at: Number(r.at), method: r.method, path: r.path, hook: r.hook, client: r.client, status: r.status,
  code: r.code, reason: r.reason, durationMs: r.duration_ms, eventIds: r.event_ids, runIds: r.run_ids, payload: r.payload,
});

/** The request log on PostgreSQL: records ride the ingress group commit, in the statement that holds the request's action. */
export function createPgRequestLog(ctx: Pick<PgContext, 'pool' | 'checkWritable'>, group: PgGroupCommit): RequestLog {
  return {
    async recordRequest(record) {
      ctx.checkWritable();
      await group.submit({ kind: 'request', record });
    },
    async listRequests(o) {
      const { rows } = await ctx.pool.query(
        `SELECT * FROM requests WHERE ($1::text IS NULL OR hook = $1) AND ($2::integer IS NULL OR status = $2)
          ORDER BY seq DESC LIMIT $3`,
        [o?.hook ?? null, o?.status ?? null, o?.limit ?? DEFAULT_LIMIT],
      );
      return (rows as RequestRow[]).map(toRecord);
    },
    async getRequest(id) {
      const { rows } = await ctx.pool.query('SELECT * FROM requests WHERE id = $1', [id]);
      const row = rows[0] as RequestRow | undefined;
      return row === undefined ? null : toRecord(row);
    },
  };
}
