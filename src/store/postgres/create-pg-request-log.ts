import { DEFAULT_LIMIT, toRequestRecord, type RequestRow } from '../rows.js';
import type { RequestLog } from '../store.js';
import type { PgGroupCommit } from './create-pg-group-commit.js';
import type { PgContext } from './pg-context.js';

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
      return (rows as RequestRow[]).map(toRequestRecord);
    },
    async getRequest(id) {
      const { rows } = await ctx.pool.query('SELECT * FROM requests WHERE id = $1', [id]);
      const row = rows[0] as RequestRow | undefined;
      return row === undefined ? null : toRequestRecord(row);
    },
  };
}
