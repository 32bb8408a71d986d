/**
 * The checkpoint thread (start-checkpointer.ts): its own connection to the serving store's
 * database, checkpointing the WAL on a timer and when asked, so the serving thread never does.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { packRecords } from './request-batch.js';
import type {
  CheckpointerData,
  CheckpointerMessage,
  CheckpointerRequest,
  CheckpointReport,
} from './start-checkpointer.js';

interface WalCheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

const data = workerData as CheckpointerData;
const port = parentPort!;
const db = new Database(data.path, { fileMustExist: true });
// PASSIVE checkpoints never wait; this bounds the wait for the WAL index lock a reader may hold.
db.pragma('busy_timeout = 50');
db.pragma(`synchronous = ${data.sync}`);
// A checkpoint copies frames through a buffer of its own, not the page cache.
db.pragma('cache_size = -1024');

const post = (m: CheckpointerMessage): void => port.postMessage(m);
const passive = (): WalCheckpointRow => (db.pragma('wal_checkpoint(PASSIVE)') as WalCheckpointRow[])[0]!;

let stopped = false;
/** Resolves the hold the thread is waiting for, once the store says it holds its commits. */
let onHeld: (() => void) | undefined;

async function checkpoint(): Promise<CheckpointReport> {
  const first = passive();
  if (first.log < data.restartFrames || stopped) return { held: false, ...first };
  await new Promise<void>((resolve) => {
    onHeld = resolve;
    post({ kind: 'hold' });
  });
  onHeld = undefined;
  try {
    return stopped ? { held: false, ...first } : { held: true, ...passive() };
  } finally {
    post({ kind: 'release' });
  }
}

/** One checkpoint at a time, whether the timer or the store asked for it. */
let inFlight: Promise<unknown> = Promise.resolve();
const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
  const next = inFlight.then(fn);
  inFlight = next.catch(() => undefined);
  return next;
};

const timer = setInterval(() => {
  // A failed checkpoint (busy, I/O) leaves the WAL as it was; the next one tries again, and the
  // serving connection's own autocheckpoint is the bound should none succeed.
  serialized(checkpoint).catch(() => undefined);
}, data.intervalMs);

post({ kind: 'ready' });

port.on('message', (m: CheckpointerRequest) => {
  switch (m.kind) {
    case 'held':
      onHeld?.();
      return;
    case 'pack': {
      let packed: ArrayBuffer;
      try {
        const out = packRecords(m.json);
        // A copy of its own: the compressed bytes may share a larger buffer, which cannot be handed over.
        packed = out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
      } catch {
        post({ kind: 'pack-failed', id: m.id });
        return;
      }
      port.postMessage({ kind: 'packed', id: m.id, packed } satisfies CheckpointerMessage, [packed]);
      return;
    }
    case 'checkpoint':
      serialized(checkpoint).then(
        (report) => post({ kind: 'checkpointed', id: m.id, report }),
        (error: unknown) => post({ kind: 'failed', id: m.id, message: (error as Error).message }),
      );
      return;
    case 'stop':
      stopped = true;
      clearInterval(timer);
      onHeld?.();
      void inFlight.then(() => {
        db.close();
        port.close();
      });
      return;
  }
});
