import type { RelayQueue } from '../relay-queue.js';
import { unacknowledgedReason } from '../relay-queue.js';
import {
  chooseLeased,
  RELAY_RECORD_COLUMNS,
  toLeasedRelayRequest,
  toRelayRecord,
  type LeasedRelayRow,
  type RelayRecordRow,
} from '../relay-rows.js';
import type { SqliteContext } from './sqlite-context.js';

/** The relay queue on SQLite: every write rides the group commit, so a request is answered once it is on disk. */
export function createSqliteRelayQueue({ db, write, now }: SqliteContext): RelayQueue {
  let s: ReturnType<typeof prepare> | null = null;
  const st = (): ReturnType<typeof prepare> => (s ??= prepare(db));
  return {
    addRelayRequest(r) {
      const headers = JSON.stringify(r.headers);
      return write(() => {
        const t = now();
        if (r.key !== null) {
          const first = st().findKey.get(r.hook, r.key, t) as { id: string; fingerprint: string | null } | undefined;
          if (first !== undefined) return { id: first.id, duplicate: true as const, fingerprint: first.fingerprint };
          // A key whose window ended is free again.
          st().freeKey.run(r.hook, r.key, t);
        }
        st().insert.run({
          id: r.id,
          hook: r.hook,
          url: r.url,
          headers,
          body: r.body,
          bytes: r.body.length,
          auth: r.auth,
          key: r.key,
          keyExpiresAt: r.keyExpiresAt,
          fingerprint: r.fingerprint,
          receivedAt: r.receivedAt,
        });
        return { id: r.id, duplicate: false as const };
      });
    },
    leaseRelayRequests({ leaseId, limit, maxBytes, leaseMs, maxLeases }) {
      return write(() => {
        const t = now();
        const rows = st().candidates.all({ now: t, limit }) as LeasedRelayRow[];
        const { chosen, dead } = chooseLeased(rows, { maxBytes, maxLeases });
        for (const row of dead) st().deadLetter.run({ now: t, reason: unacknowledgedReason(maxLeases), seq: row.seq });
        for (const row of chosen) st().lease.run(leaseId, t + leaseMs, row.seq);
        return chosen.map(toLeasedRelayRequest);
      });
    },
    ackRelayRequests({ done, refused, at }) {
      return write(() => {
        let d = 0;
        let r = 0;
        for (const id of done) d += st().done.run(at, id).changes;
        for (const x of refused)
          r += st().refuse.run({ at, id: x.id, status: x.status, code: x.code, reason: x.reason }).changes;
        return { done: d, refused: r };
      });
    },
    async readRelayBacklog() {
      const row = st().backlog.get({ now: now() }) as {
        pending: number;
        leased: number;
        dead: number;
        oldest: number | null;
      };
      return { pending: row.pending, leased: row.leased, dead: row.dead, oldestPendingAt: row.oldest };
    },
    async listRelayRequests({ state, limit }) {
      const rows = (state === undefined ? st().list.all(limit) : st().listState.all(state, limit)) as RelayRecordRow[];
      return rows.map(toRelayRecord);
    },
    requeueRelayRequest(id) {
      return write(() => st().requeue.run(id).changes === 1);
    },
    pruneRelay({ receivedBefore, now: at }, limit) {
      return write(() => ({
        expired: st().pruneState.run('pending', receivedBefore, limit).changes,
        dead: st().pruneState.run('dead', receivedBefore, limit).changes,
        done: st().pruneDone.run(at, limit).changes,
      }));
    },
  };
}

function prepare(db: SqliteContext['db']) {
  return {
    findKey: db.prepare(
      'SELECT id, fingerprint FROM relay_requests WHERE hook = ? AND idem_key = ? AND key_expires_at > ?',
    ),
    freeKey: db.prepare(
      'UPDATE relay_requests SET idem_key = NULL WHERE hook = ? AND idem_key = ? AND key_expires_at <= ?',
    ),
    insert: db.prepare(
      `INSERT INTO relay_requests (id, hook, url, headers, body, bytes, auth, idem_key, key_expires_at, fingerprint,
        received_at, state) VALUES (@id, @hook, @url, @headers, @body, @bytes, @auth, @key, @keyExpiresAt,
        @fingerprint, @receivedAt, 'pending')`,
    ),
    deadLetter: db.prepare(
      `UPDATE relay_requests SET state = 'dead', ended_at = @now, reason = @reason, lease_id = NULL, lease_until = NULL
        WHERE seq = @seq`,
    ),
    candidates: db.prepare(
      `SELECT seq, id, hook, url, headers, body, bytes, auth, received_at, attempts FROM relay_requests
        WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < @now) ORDER BY seq LIMIT @limit`,
    ),
    lease: db.prepare('UPDATE relay_requests SET lease_id = ?, lease_until = ?, attempts = attempts + 1 WHERE seq = ?'),
    done: db.prepare(
      `UPDATE relay_requests SET state = 'done', ended_at = ?, body = x'', headers = '{}', lease_id = NULL,
        lease_until = NULL WHERE id = ? AND state = 'pending'`,
    ),
    refuse: db.prepare(
      `UPDATE relay_requests SET state = 'dead', ended_at = @at, status = @status, code = @code, reason = @reason,
        lease_id = NULL, lease_until = NULL WHERE id = @id AND state = 'pending'`,
    ),
    backlog: db.prepare(
      `SELECT
        (SELECT count(*) FROM relay_requests WHERE state = 'pending') AS pending,
        (SELECT count(*) FROM relay_requests WHERE state = 'pending' AND lease_until >= @now) AS leased,
        (SELECT count(*) FROM relay_requests WHERE state = 'dead') AS dead,
        (SELECT received_at FROM relay_requests WHERE state = 'pending' ORDER BY seq LIMIT 1) AS oldest`,
    ),
    list: db.prepare(`SELECT ${RELAY_RECORD_COLUMNS} FROM relay_requests ORDER BY seq DESC LIMIT ?`),
    listState: db.prepare(
      `SELECT ${RELAY_RECORD_COLUMNS} FROM relay_requests WHERE state = ? ORDER BY seq DESC LIMIT ?`,
    ),
    requeue: db.prepare(
      `UPDATE relay_requests SET state = 'pending', attempts = 0, ended_at = NULL, status = NULL, code = NULL,
        reason = NULL WHERE id = ? AND state = 'dead'`,
    ),
    pruneState: db.prepare(
      `DELETE FROM relay_requests WHERE seq IN (SELECT seq FROM relay_requests WHERE state = ? AND received_at < ?
        ORDER BY seq LIMIT ?)`,
    ),
    pruneDone: db.prepare(
      `DELETE FROM relay_requests WHERE seq IN (SELECT seq FROM relay_requests WHERE state = 'done'
        AND coalesce(key_expires_at, 0) <= ? ORDER BY seq LIMIT ?)`,
    ),
  };
}
