import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../store.js';
import type { ActionSource, NewRun, NewSystemEvent, RunRecord, RunState, SystemEventRecord } from '../types.js';
import { createGroupCommit } from './create-group-commit.js';
import { MIGRATIONS } from './migrations.js';

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

interface EventRow {
  id: string; agent_id: string; session_key: string; text: string; mode: string; source: string;
  created_at: number; consumed_at: number | null;
}
interface RunRow {
  id: string; state: string; agent_id: string; session_key: string; message: string; name: string;
  wake_mode: string; deliver: number; channel: string; recipient: string | null; model: string | null;
  thinking: string | null; timeout_seconds: number; source: string; created_at: number; attempts: number;
  started_at: number | null; finished_at: number | null; reply: string | null; error: string | null;
}

const toEvent = (r: EventRow): SystemEventRecord => ({
  id: r.id,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  text: r.text,
  mode: r.mode as SystemEventRecord['mode'],
  source: JSON.parse(r.source) as ActionSource,
  createdAt: r.created_at,
  consumedAt: r.consumed_at,
});

const toRun = (r: RunRow): RunRecord => ({
  id: r.id,
  state: r.state as RunState,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  message: r.message,
  name: r.name,
  wakeMode: r.wake_mode as RunRecord['wakeMode'],
  deliver: r.deliver === 1,
  channel: r.channel as RunRecord['channel'],
  to: r.recipient,
  model: r.model,
  thinking: r.thinking as RunRecord['thinking'],
  timeoutSeconds: r.timeout_seconds,
  source: JSON.parse(r.source) as ActionSource,
  createdAt: r.created_at,
  attempts: r.attempts,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  reply: r.reply,
  error: r.error,
});

/** Opens (creating and migrating as needed) the embedded SQLite store in WAL mode. */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const readonly = options.readonly ?? false;
  if (!readonly) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const db = new Database(options.path, { readonly, fileMustExist: readonly });
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.sync === 'normal' ? 'NORMAL' : 'FULL'}`);
    migrate(db);
  }
  db.pragma('busy_timeout = 5000');

  const group = createGroupCommit(db);
  const insertEvent = readonly ? null : db.prepare(
    'INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertRun = readonly ? null : db.prepare(
    `INSERT INTO runs (id, state, agent_id, session_key, message, name, wake_mode, deliver, channel, recipient,
      model, thinking, timeout_seconds, source, created_at) VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectEvents = db.prepare('SELECT * FROM system_events ORDER BY seq DESC LIMIT ?');
  const selectRuns = db.prepare('SELECT * FROM runs ORDER BY seq DESC LIMIT ?');
  let closed = false;

  const writable = <T>(stmt: T | null): T => {
    if (stmt === null || closed) throw new Error(closed ? 'store is closed' : 'store is read-only');
    return stmt;
  };

  return {
    addSystemEvent(e: NewSystemEvent) {
      const stmt = writable(insertEvent);
      const source = JSON.stringify(e.source);
      return group.submit(() => {
        stmt.run(e.id, e.agentId, e.sessionKey, e.text, e.mode, source, e.createdAt);
      });
    },
    enqueueRun(r: NewRun) {
      const stmt = writable(insertRun);
      const source = JSON.stringify(r.source);
      return group.submit(() => {
        stmt.run(r.id, r.agentId, r.sessionKey, r.message, r.name, r.wakeMode, r.deliver ? 1 : 0, r.channel,
          r.to, r.model, r.thinking, r.timeoutSeconds, source, r.createdAt);
      });
    },
    async listSystemEvents(o = {}) {
      return (selectEvents.all(o.limit ?? DEFAULT_LIMIT) as EventRow[]).map(toEvent);
    },
    async listRuns(o = {}) {
      return (selectRuns.all(o.limit ?? DEFAULT_LIMIT) as RunRow[]).map(toRun);
    },
    async close() {
      if (closed) return;
      group.flush();
      closed = true;
      db.close();
    },
  };
}
