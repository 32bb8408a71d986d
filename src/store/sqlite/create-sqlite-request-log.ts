import type { RequestLog } from '../store.js';
import { DEFAULT_LIMIT, toRequestRecord, type RequestRow } from '../rows.js';
import type { SqliteContext } from './sqlite-context.js';

/** The request log on SQLite: inserts ride the group commit with the request's own action. Pruned by the retention role. */
export function createSqliteRequestLog({ db, write }: Pick<SqliteContext, 'db' | 'write'>): RequestLog {
  const upsert = db.prepare(
    `INSERT INTO requests (id, at, method, path, hook, client, status, code, reason, duration_ms, event_ids, run_ids, payload)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET status = excluded.status, code = excluded.code, reason = excluded.reason,
      duration_ms = excluded.duration_ms, event_ids = excluded.event_ids, run_ids = excluded.run_ids, payload = excluded.payload`,
  );
  // Newest first along the key: filters are checked row by row until `limit` match.
  const select = db.prepare(
    `SELECT * FROM requests WHERE (@hook IS NULL OR hook = @hook) AND (@status IS NULL OR status = @status)
      ORDER BY id DESC LIMIT @limit`,
  );
  const selectOne = db.prepare('SELECT * FROM requests WHERE id = ?');
  return {
    recordRequest(r) {
      const eventIds = JSON.stringify(r.eventIds);
      const runIds = JSON.stringify(r.runIds);
      return write(() => {
        upsert.run(r.id, r.at, r.method, r.path, r.hook, r.client, r.status, r.code, r.reason, r.durationMs, eventIds, runIds, r.payload);
      });
    },
    async listRequests(o) {
      const rows = select.all({ hook: o?.hook ?? null, status: o?.status ?? null, limit: o?.limit ?? DEFAULT_LIMIT }) as RequestRow[];
      return rows.map(toRequestRecord);
    },
    async getRequest(id) {
      const row = selectOne.get(id) as RequestRow | undefined;
      return row === undefined ? null : toRequestRecord(row);
    },
  };
}
