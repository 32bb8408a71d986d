/**
 * The read thread (create-read-thread.ts): answers each read it is sent, one at a time, on a
 * read-only connection of its own, and on `close` closes the connection and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createDigestReader } from './read-digest.js';
import { createQueueReader } from './read-queue.js';
import { createRequestsReader } from './read-requests.js';
import { createSessionsReader } from './read-sessions.js';
import type { ReadReply, ReadRequest } from './create-read-thread.js';

const { path } = workerData as { path: string };
/** The connection's page cache, KiB. */
const READ_CACHE_KB = 2048;
// Opened by the first read, so a database that cannot be opened fails each read with the reason.
let opened: Database.Database | undefined;
const db = (): Database.Database => {
  if (opened === undefined) {
    opened = new Database(path, { readonly: true, fileMustExist: true });
    opened.pragma('busy_timeout = 1000');
    // About SQLite's own default of 2,000 KiB (better-sqlite3 makes it 16 MB), which also bounds a
    // GROUP BY's sorter before it spills to a temporary file: a digest of a million pending events
    // took as long (4-5 s) and raised the thread's memory by 9 MB instead of 35.
    opened.pragma(`cache_size = -${READ_CACHE_KB}`);
  }
  return opened;
};
// Each reader prepares its statements once, on its first read.
const digest = lazy(() => createDigestReader(db()));
const queue = lazy(() => createQueueReader(db()));
const sessions = lazy(() => createSessionsReader(db()));
const requests = lazy(() => createRequestsReader(db()));

parentPort!.on('message', (message: { id: number; read: ReadRequest } | 'close') => {
  if (message === 'close') {
    opened?.close();
    parentPort!.close();
    return;
  }
  let reply: ReadReply;
  try {
    reply = { id: message.id, value: answer(message.read) };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply);
});

function answer(read: ReadRequest): unknown {
  switch (read.kind) {
    case 'digest':
      return digest()(read.sessionKey, read.options);
    case 'queue':
      return queue()();
    case 'sessions':
      return sessions().list(read.limit);
    case 'session':
      return sessions().get(read.key);
    case 'requests':
      return requests()(read.options);
  }
}

function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}
