import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../../common/clock.js';
import type { Store } from '../store.js';
import { COALESCE_SEPARATOR, coalescedGrowth, MAX_COALESCED_CHARS } from '../coalesce-separator.js';
import { createSignalHub } from '../create-signal-hub.js';
import { DuplicateRequestError } from '../duplicate-request-error.js';
import { joinedAnswers } from '../joined-answers.js';
import type { IdempotencyRecord, RecordedActions, RecordedGroup } from '../types.js';
import { createConsumedMarker } from './consumed-marks.js';
import { createFloodReads } from './create-flood-reads.js';
import { createReadThread } from './create-read-thread.js';
import { createGroupCommit } from './create-group-commit.js';
import { createWalSync, type WalSync, type WalSyncIo } from './create-wal-sync.js';
import { createStallWatch } from '../create-stall-watch.js';
import { createSqliteDeliveryQueue } from './create-sqlite-delivery-queue.js';
import { createSqliteHeartbeats } from './create-sqlite-heartbeats.js';
import { createSqliteLockouts } from './create-sqlite-lockouts.js';
import { createSqliteRetention } from './create-sqlite-retention.js';
import { createSqliteReader } from './create-sqlite-reader.js';
import { createSqliteRunQueue } from './create-sqlite-run-queue.js';
import { createSqliteCancelRun } from './create-sqlite-cancel-run.js';
import { createSqliteRequestLog } from './create-sqlite-request-log.js';
import { createSqliteStats } from './create-sqlite-stats.js';
import { createSqliteHolds } from './create-sqlite-holds.js';
import type { StoreObserver } from '../store-stats.js';
import { createPrivateFile, lockDatabase, StoreMissingError, type DatabaseLock } from './lock-database.js';
import { MIGRATIONS } from './migrations.js';
import { resolveDatabasePath } from './resolve-database-path.js';
import { toSqliteOpenError } from './sqlite-open-error.js';
import { StoreOpenError } from '../store-open-error.js';
import { prepareStatements } from './prepare-statements.js';
import { packRecordsLater } from './request-batch.js';
import { startCheckpointer, type Checkpointer } from './start-checkpointer.js';
import { toIdempotency, type IdempotencyRow } from '../rows.js';
import type { SqliteContext } from './sqlite-context.js';
import { createSourceEncoder } from '../action-source.js';
import { publishedOfRun } from '../log-rows.js';
import { createSqliteEventLog } from './create-sqlite-event-log.js';
import { createSqliteSubscriptions } from './create-sqlite-subscriptions.js';
import { createSqliteRelayQueue } from './create-sqlite-relay-queue.js';

export interface SqliteStoreOptions {
  /** Database file path. */
  path: string;
  /** `full` fsyncs every commit (survives power loss); `normal` survives a process crash. @default 'full' */
  sync?: 'full' | 'normal';
  /**
   * `serve` takes the database's exclusive lock, migrates, and treats every lease it finds as a
   * dead process's; `read` opens read-only; `write` changes rows beside a running gateway.
   * @default 'serve'
   */
  mode?: 'serve' | 'read' | 'write';
  /** Lease clock. @default the system clock */
  clock?: Clock;
  /** Sees each group commit (metrics). */
  observer?: StoreObserver;
  /** Runs a claim's held-mark passes go through in all (tests). @default MARK_BATCH (held-keys.ts) */
  heldMarkBatch?: number;
  /** Ready runs a claim reads in order before it looks further (tests). @default 1000 */
  claimScan?: number;
  /** Events a batch stamps after a digest turn consumed them by a mark (tests). @default STAMP_BATCH (consumed-marks.ts) */
  consumeStampBatch?: number;
  /**
   * How often (`serve` mode) the WAL's size is looked at until the checkpoint thread starts, so
   * starting it costs the gateway's start-up nothing. @default 1000
   */
  checkpointDelayMs?: number;
  /**
   * WAL frames (pages) past which the checkpoint thread starts; 0 starts it at the first look
   * (tests). @default 1000, SQLite's own autocheckpoint
   */
  checkpointFromFrames?: number;
  /** How the WAL is synced and timed (tests stall it). @default the file system's fdatasync */
  walSyncIo?: Partial<WalSyncIo>;
  /** How long a commit's sync may go unfinished before new ingress writes are refused (tests). @default STALL_MS */
  stallMs?: number;
}

/** WAL frames (pages) past which the checkpoint thread holds the writer for a checkpoint that starts the WAL over. */
const WAL_RESTART_FRAMES = 4096;
/**
 * The serving connection's own autocheckpoint while the checkpoint thread runs: only a backstop,
 * should that thread fall far behind. SQLite's default before it runs, and should it fail.
 */
const BACKSTOP_AUTOCHECKPOINT_FRAMES = 4 * WAL_RESTART_FRAMES;
const DEFAULT_AUTOCHECKPOINT_FRAMES = 1000;
/**
 * The serving connection's page cache: SQLite's own default, not better-sqlite3's 16 MB. Its
 * writes append to the right edges of its B-trees and its reads are of recent rows, so 500 pages
 * hold what it uses; under load the 16 MB filled with pages just written (the gateway's RSS at
 * 50 connections: 139 MB with it, 121 without, the same CPU a request either way).
 */
const SERVING_CACHE_KB = 2048;
/** What a WAL file is cut back to when the writer starts it over. */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/** Frames in a WAL file of pages of `pageSize` bytes (its 32-byte header, then a 24-byte header a frame); 0 when there is none. */
function walFrames(path: string, pageSize: number): number {
  try {
    return Math.max(0, Math.floor((statSync(path).size - 32) / (pageSize + 24)));
  } catch {
    return 0;
  }
}

/** Two names of one database are two gateways' worth of locks and WALs over one file: refused. */
function refuseHardLinks(path: string): void {
  let links: number;
  try {
    links = statSync(path).nlink;
  } catch {
    return; // not created yet
  }
  if (links > 1) {
    throw new StoreOpenError(
      'store_open_failed',
      `cannot open the SQLite store ${path}: it has ${links} names (hard links), and SQLite keeps a database's WAL and this gateway its lock beside one name, so a gateway or command opening another name would corrupt it; give store.path a database with one name (copy the file instead of linking it)`,
    );
  }
}

function synced(walSync: WalSync): Promise<void> {
  return new Promise((resolve, reject) => walSync.whenSynced((error) => (error === null ? resolve() : reject(error))));
}

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

function checkVersion(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== MIGRATIONS.length) {
    throw new StoreOpenError(
      'store_outdated',
      `${path} has schema version ${version}, this hookgate expects ${MIGRATIONS.length}: start the gateway once to migrate it`,
    );
  }
}

/**
 * Opens the embedded SQLite store (WAL). In `serve` mode it belongs to this process alone. The
 * database is the file `path` really names (symlinks resolved); one with more than one name (hard
 * links) is refused, since a lock or a WAL kept beside one name is not seen through another. A
 * failure to open is one sentence naming the file and the cause (`StoreOpenError`).
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  let path = options.path;
  try {
    path = resolveDatabasePath(options.path);
    return openSqliteStore({ ...options, path });
  } catch (error) {
    throw toSqliteOpenError(path, error);
  }
}

function openSqliteStore(options: SqliteStoreOptions): Store {
  const mode = options.mode ?? 'serve';
  const clock = options.clock ?? systemClock;
  let lock: DatabaseLock | undefined;
  if (mode === 'serve') {
    mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    lock = lockDatabase(options.path);
  } else if (!existsSync(options.path)) throw new StoreMissingError(options.path);
  let db: Database.Database;
  let walSync: WalSync | undefined;
  try {
    refuseHardLinks(options.path);
    if (mode === 'serve') createPrivateFile(options.path);
    db = new Database(options.path, { readonly: mode === 'read', fileMustExist: mode !== 'serve' });
    // better-sqlite3 waits synchronously: a long busy wait would freeze every request. The serving
    // gateway is the database's only regular writer, so a lock held by a CLI command is brief.
    db.pragma(`busy_timeout = ${mode === 'serve' ? 200 : 5000}`);
    if (mode === 'serve') {
      db.pragma('journal_mode = WAL');
      // `full` is kept by syncing the WAL after each commit, before its writers are answered (create-wal-sync.ts).
      db.pragma('synchronous = NORMAL');
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      db.pragma(`cache_size = -${SERVING_CACHE_KB}`);
      migrate(db);
      if (options.sync !== 'normal') walSync = createWalSync(`${options.path}-wal`, options.walSyncIo);
    } else {
      checkVersion(db, options.path);
    }
  } catch (error) {
    lock?.release();
    throw error;
  }
  const st = prepareStatements(db);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const encodeSource = createSourceEncoder();
  if (mode === 'serve') {
    // This process holds the lock, so every lease in the database belongs to a process that died.
    // On a full disk the leases are left to expire on the clock: the gateway starts to say so.
    try {
      db.transaction(() => {
        st.expireRunLeases.run();
        st.expireDeliveryLeases.run();
        st.expireHeartbeatLeases.run();
        st.expireCatchUpLeases.run();
      })();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_FULL') throw error;
    }
  }
  let closed = false;
  let closing: Promise<void> | undefined;
  // A sync that does not end (a disk that stopped answering) turns new ingress writes away at once
  // instead of queueing them behind it; the writes already taken are answered when it ends.
  const stalls = createStallWatch(options.stallMs);
  const group = createGroupCommit(db, {
    observer: options.observer,
    afterCommit: walSync?.afterCommit,
    stallWatch: stalls,
  });
  // Checkpoints are the checkpoint thread's, off the request path (start-checkpointer.ts).
  let checkpointer: Checkpointer | undefined;
  const autocheckpoint = (frames: number): void => {
    if (!closed) db.pragma(`wal_autocheckpoint = ${frames}`);
  };
  const startThread = (): void => {
    checkpointer = startCheckpointer({
      path: options.path,
      sync: options.sync === 'normal' ? 'NORMAL' : 'FULL',
      restartFrames: WAL_RESTART_FRAMES,
      hold: group.hold,
      release: group.release,
      onReady: () => autocheckpoint(BACKSTOP_AUTOCHECKPOINT_FRAMES),
      onFailed: () => autocheckpoint(DEFAULT_AUTOCHECKPOINT_FRAMES),
    });
  };
  // The thread (a V8 isolate, about 10 MB) starts once the WAL holds as much as this connection's
  // own first checkpoint would have copied: a gateway that writes little never pays for it, and
  // until then this connection's autocheckpoint waits for the thread rather than copying itself.
  const checkpointFromFrames = options.checkpointFromFrames ?? DEFAULT_AUTOCHECKPOINT_FRAMES;
  if (mode === 'serve' && checkpointFromFrames > 0) autocheckpoint(BACKSTOP_AUTOCHECKPOINT_FRAMES);
  const checkpointWatch =
    mode !== 'serve'
      ? undefined
      : setInterval(() => {
          if (walFrames(`${options.path}-wal`, pageSize) < checkpointFromFrames) return;
          clearInterval(checkpointWatch);
          startThread();
        }, options.checkpointDelayMs ?? 1000);
  checkpointWatch?.unref();
  // A savepoint inside the group's transaction: a duplicate key undoes this request alone.
  const recordAll = db.transaction((a: RecordedActions) => {
    const claimed: IdempotencyRecord[] = [];
    let published = false;
    const claim = (k: IdempotencyRecord | null): boolean => {
      if (k === null) return true;
      const { hook, key, status, body, createdAt, expiresAt } = k;
      const fingerprint = k.fingerprint ?? null;
      if (
        st.claimIdempotencyKey.run({ hook, key, status, body, createdAt, expiresAt, fingerprint, now: clock.now() })
          .changes !== 1
      )
        return false;
      claimed.push(k);
      return true;
    };
    const coalesced: Record<string, string> = {};
    const write = (g: RecordedGroup): void => {
      for (const e of g.events) {
        st.addEvent(e, encodeSource(e.source));
        if (e.published !== undefined) published = true;
        st.addLogEvents([e.published]);
      }
      if (g.published !== undefined && g.published.length > 0) {
        st.addLogEvents(g.published);
        published = true;
      }
      for (const r of g.runs) {
        const c = r.coalesce;
        const joined =
          c === undefined
            ? undefined
            : (st.joinCoalesced.get({
                key: c.key,
                now: clock.now(),
                message: r.message,
                separator: COALESCE_SEPARATOR,
                growth: coalescedGrowth(r.message),
                max: MAX_COALESCED_CHARS,
              }) as { id: string } | undefined);
        if (joined !== undefined) coalesced[r.id] = joined.id;
        else st.addRun(r, encodeSource(r.source));
        if (r.published !== undefined) published = true;
        st.addLogEvents([publishedOfRun(r, joined?.id)]);
      }
    };
    if (!claim(a.idempotency)) throw new DuplicateRequestError(a.idempotency!.hook, a.idempotency!.key);
    write(a);
    const skipped: number[] = [];
    (a.items ?? []).forEach((item, i) => {
      if (claim(item.idempotency)) write(item);
      else skipped.push(i);
    });
    for (const a of joinedAnswers(claimed, coalesced)) st.setIdempotencyBody.run(a.body, a.hook, a.key);
    return { skipped, coalesced, published };
  });
  const signals = createSignalHub();
  const ctx: SqliteContext = {
    db,
    st,
    write(fn) {
      if (closed) return Promise.reject(new Error('store is closed'));
      if (mode === 'read') return Promise.reject(new Error('store is read-only'));
      return group.submit(fn);
    },
    now: () => clock.now(),
    emit: signals.emit,
    newClaimId: randomUUID,
  };

  const { expireLeases, ...subscriptions } = createSqliteSubscriptions(ctx);
  // This process holds the lock: a lease it finds is a dead process's.
  if (mode === 'serve') expireLeases();
  const eventLog = createSqliteEventLog(ctx, () => (walSync === undefined ? Promise.resolve() : synced(walSync)));
  // One read thread for the reads that may cover a flood, started by the first and ended when idle.
  const reads = createReadThread(options.path);
  const requestLog = createSqliteRequestLog(
    ctx,
    (o) => reads.read({ kind: 'requests', options: o }),
    undefined,
    undefined,
    // Batches are compressed on the checkpoint thread when it runs (a busy gateway's), else on libuv's pool.
    (json, done) => (checkpointer === undefined ? packRecordsLater(json, done) : checkpointer.pack(json, done)),
  );
  const floodReads = createFloodReads(db, reads.read);
  // Stamps what digest turns consumed by a mark; a mark left by a crash is stamped from the start.
  const marker = createConsumedMarker(ctx, options.consumeStampBatch);
  if (mode === 'serve') marker.resume();
  return {
    shared: false,
    async addSystemEvent(e) {
      stalls.check();
      const source = encodeSource(e.source);
      await ctx.write(() => {
        st.addEvent(e, source);
        st.addLogEvents([e.published]);
      });
      if (e.mode === 'now') ctx.emit({ kind: 'heartbeat', agentId: e.agentId });
      if (e.published !== undefined) ctx.emit({ kind: 'published' });
    },
    async enqueueRun(r) {
      stalls.check();
      const source = encodeSource(r.source);
      await ctx.write(() => {
        st.addRun(r, source);
        st.addLogEvents([r.published]);
      });
      ctx.emit({ kind: 'runs' });
      if (r.published !== undefined) ctx.emit({ kind: 'published' });
    },
    async recordActions(a) {
      stalls.check();
      const outcome = await ctx.write(() => {
        try {
          return recordAll(a);
        } catch (error) {
          if (error instanceof DuplicateRequestError) return error;
          throw error;
        }
      });
      if (outcome instanceof DuplicateRequestError) throw outcome;
      const written = [a, ...(a.items ?? []).filter((_, i) => !outcome.skipped.includes(i))];
      if (written.some((g) => g.runs.length > 0)) ctx.emit({ kind: 'runs' });
      if (outcome.published) ctx.emit({ kind: 'published' });
      for (const agentId of new Set(
        written
          .flatMap((g) => g.events)
          .filter((e) => e.mode === 'now')
          .map((e) => e.agentId),
      )) {
        ctx.emit({ kind: 'heartbeat', agentId });
      }
      return { skippedItems: outcome.skipped, coalesced: outcome.coalesced };
    },
    async findIdempotencyKey(hook, key) {
      const row = st.selectIdempotencyKey.get(hook, key, clock.now()) as IdempotencyRow | undefined;
      if (row === undefined) return null;
      // The key's commit may still be syncing: a duplicate is not answered before its first is on disk.
      if (walSync !== undefined) await synced(walSync);
      return toIdempotency(row);
    },
    ...createSqliteReader(ctx, reads.read, floodReads),
    ...createSqliteRunQueue(ctx, options.heldMarkBatch, options.claimScan),
    ...createSqliteCancelRun(ctx),
    listRequests: requestLog.listRequests,
    getRequest: requestLog.getRequest,
    recordRequest: requestLog.recordRequest,
    ...createSqliteHeartbeats(ctx, marker),
    ...createSqliteDeliveryQueue(ctx),
    ...createSqliteLockouts(ctx),
    ...createSqliteRetention(ctx, requestLog),
    ...createSqliteStats(ctx, options.path, floodReads),
    ...eventLog,
    ...subscriptions,
    ...createSqliteHolds(ctx),
    ...createSqliteRelayQueue(ctx),
    subscribe: signals.subscribe,
    close() {
      // One close for every caller: each resolves once the database is closed and the lock released.
      closing ??= (async () => {
        const marking = marker.stop();
        requestLog.flushPending();
        group.flush();
        closed = true;
        signals.clear();
        clearInterval(checkpointWatch);
        // The threads' connections first: the last one to close checkpoints and removes the WAL.
        await marking;
        await reads.close();
        await checkpointer?.stop();
        await walSync?.close();
        db.close();
        lock?.release();
      })();
      return closing;
    },
  };
}
