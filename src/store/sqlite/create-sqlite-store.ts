import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../store.js';
import type { DeliveryRecord, DeliveryWithAttempts, RunRecord } from '../types.js';
import { createGroupCommit } from './create-group-commit.js';
import { MIGRATIONS } from './migrations.js';
import { prepareStatements } from './prepare-statements.js';
import {
  toAttempt, toDelivery, toEvent, toRun, toSession, toTranscript,
  type AttemptRow, type DeliveryRow, type EventRow, type RunRow, type SessionRow, type TranscriptRow,
} from './rows.js';

export interface SqliteStoreOptions {
  /** Database file path. */
  path: string;
  /** `full` fsyncs every commit (survives power loss); `normal` survives a process crash. @default 'full' */
  sync?: 'full' | 'normal';
  /** Open without creating or migrating (offline CLI reads). @default false */
  readonly?: boolean;
}

const DEFAULT_LIMIT = 20;

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

/** Opens (creating and migrating as needed) the embedded SQLite store in WAL mode. */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const readonly = options.readonly ?? false;
  if (!readonly) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const db = new Database(options.path, { readonly, fileMustExist: readonly });
  db.pragma('busy_timeout = 5000');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.sync === 'normal' ? 'NORMAL' : 'FULL'}`);
    migrate(db);
  }
  const st = prepareStatements(db);
  const group = createGroupCommit(db);
  let closed = false;
  const write = <T>(fn: () => T): Promise<T> => {
    if (closed) return Promise.reject(new Error('store is closed'));
    if (readonly) return Promise.reject(new Error('store is read-only'));
    return group.submit(fn);
  };
  const limitOf = (o: { limit?: number } | undefined): number => o?.limit ?? DEFAULT_LIMIT;
  const withAttempts = (row: DeliveryRow): DeliveryWithAttempts => ({
    ...toDelivery(row),
    attemptLog: (st.selectAttempts.all(row.id) as AttemptRow[]).map(toAttempt),
  });

  return {
    addSystemEvent(e) {
      const source = JSON.stringify(e.source);
      return write(() => st.addEvent(e, source));
    },
    enqueueRun(r) {
      const source = JSON.stringify(r.source);
      return write(() => st.addRun(r, source));
    },
    async listSystemEvents(o) {
      return (st.selectEvents.all(limitOf(o)) as EventRow[]).map(toEvent);
    },
    async listRuns(o) {
      return (st.selectRuns.all(limitOf(o)) as RunRow[]).map(toRun);
    },
    async getRun(id) {
      const row = st.selectRun.get(id) as RunRow | undefined;
      return row === undefined ? null : toRun(row);
    },

    claimRuns({ owner, limit, leaseMs, now }) {
      return write(() => {
        const claimed: RunRecord[] = [];
        for (const row of st.selectClaimable.all(limit) as RunRow[]) {
          if (st.claimRun.run(now, owner, now + leaseMs, row.id).changes !== 1) continue;
          claimed.push(toRun({ ...row, state: 'running', attempts: row.attempts + 1, started_at: row.started_at ?? now,
            lease_owner: owner, lease_until: now + leaseMs }));
        }
        return claimed;
      });
    },
    releaseRuns(owner, runIds) {
      return write(() => {
        for (const id of runIds) st.releaseRun.run(id, owner);
      });
    },
    renewLeases(owner, runIds, leaseUntil) {
      return write(() => {
        for (const id of runIds) st.renewLease.run(leaseUntil, id, owner);
      });
    },
    completeRun(c) {
      const source = JSON.stringify(c.summary.source);
      return write(() => {
        const done = st.finishRun.run(c.state, c.finishedAt, c.model, c.reply, c.error, c.runId, c.owner, c.attempt);
        if (done.changes !== 1) return false;
        st.addTranscript(c.summary.agentId, c.transcript, c.finishedAt);
        st.addEvent(c.summary, source);
        if (c.delivery !== null) st.addDelivery(c.delivery);
        return true;
      });
    },
    recoverExpiredRuns(now, maxAttempts, summarize) {
      return write(() => {
        const result = { requeued: [] as string[], failed: [] as string[] };
        for (const row of st.selectExpired.all(now) as RunRow[]) {
          if (row.attempts < maxAttempts) {
            st.requeueRun.run(row.id);
            result.requeued.push(row.id);
            continue;
          }
          st.failRun.run(now, 'interrupted', row.id);
          const run = toRun({ ...row, state: 'failed', error: 'interrupted', finished_at: now });
          const summary = summarize(run);
          st.addEvent(summary, JSON.stringify(summary.source));
          result.failed.push(row.id);
        }
        return result;
      });
    },

    async listPendingEvents(sessionKey, o) {
      return (st.selectPending.all(sessionKey, o?.limit ?? -1) as EventRow[]).map(toEvent);
    },
    async hasPendingNowEvent(sessionKey) {
      return st.selectPendingNow.get(sessionKey) !== undefined;
    },
    recordHeartbeatTurn(t) {
      const turnId = t.transcript[0]?.turnId ?? null;
      return write(() => {
        for (const id of t.consumedEventIds) st.consumeEvent.run(t.at, turnId, id);
        st.addTranscript(t.agentId, t.transcript, t.at);
        if (t.delivery !== null) st.addDelivery(t.delivery);
      });
    },
    async readTranscript(sessionKey, o) {
      return (st.selectTranscript.all(sessionKey, o?.limit ?? -1) as TranscriptRow[]).map(toTranscript);
    },
    async listSessions(o) {
      return (st.selectSessions.all({ limit: limitOf(o) }) as SessionRow[]).map(toSession);
    },
    async getSession(key) {
      const row = st.selectSession.get({ key }) as SessionRow;
      return row.agent_id === null ? null : toSession(row);
    },
    async getLastRoute(sessionKey) {
      const row = st.selectLastRoute.get(sessionKey) as { last_channel: string | null; last_to: string | null } | undefined;
      return row?.last_channel == null || row.last_to == null ? null : { channel: row.last_channel, to: row.last_to };
    },
    setLastRoute(sessionKey, agentId, channel, to, at) {
      return write(() => {
        st.setLastRoute.run(sessionKey, agentId, channel, to, at, at);
      });
    },

    addDelivery(d) {
      return write(() => st.addDelivery(d));
    },
    async listDeliveries(o) {
      return (st.selectDeliveries.all({ state: o?.state ?? null, limit: limitOf(o) }) as DeliveryRow[]).map(withAttempts);
    },
    async getDelivery(id) {
      const row = st.selectDelivery.get(id) as DeliveryRow | undefined;
      return row === undefined ? null : withAttempts(row);
    },
    claimDueDeliveries({ owner, now, limit, leaseMs }) {
      return write(() => {
        const claimed: DeliveryRecord[] = [];
        for (const row of st.selectDueDeliveries.all({ now, limit }) as DeliveryRow[]) {
          if (st.leaseDelivery.run(owner, now + leaseMs, row.id, now).changes === 1) claimed.push(toDelivery(row));
        }
        return claimed;
      });
    },
    recordDeliveryProgress(id, owner, partsSent, resolvedChannel, resolvedTo, at) {
      return write(() => {
        st.progressDelivery.run(partsSent, resolvedChannel, resolvedTo, at, id, owner);
      });
    },
    recordDeliveryAttempt(r) {
      const state = r.outcome === 'retry' ? 'pending' : r.outcome;
      return write(() => {
        const done = st.finishAttempt.run({
          id: r.deliveryId, owner: r.owner, state, error: r.error, at: r.at, resolvedChannel: r.resolvedChannel,
          resolvedTo: r.resolvedTo, partsSent: r.partsSent, nextAttemptAt: r.nextAttemptAt,
          sentAt: r.outcome === 'sent' ? r.at : null,
        });
        if (done.changes !== 1) return false;
        st.insertAttempt.run(r.deliveryId, r.attempt, r.at, r.status, r.error, r.outcome);
        if (r.lastRoute !== null) {
          const l = r.lastRoute;
          st.setLastRoute.run(l.sessionKey, l.agentId, l.channel, l.to, r.at, r.at);
        }
        return true;
      });
    },
    requeueDelivery(id, now) {
      return write(() => st.requeueDelivery.run(now, now, id).changes === 1);
    },
    releaseDeliveryLeases() {
      return write(() => {
        st.releaseDeliveryLeases.run();
      });
    },

    async close() {
      if (closed) return;
      group.flush();
      closed = true;
      db.close();
    },
  };
}
