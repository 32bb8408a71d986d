/**
 * A read thread (run-read-thread.ts): makes one read that may cover a million rows (a backlog's
 * digest, the queue depths or session listings under a flood, a filtered listing of a long request
 * log) on a read-only connection of its own, so the serving thread never stops for it, posts the
 * answer, and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createDigestReader } from './read-digest.js';
import { createQueueReader } from './read-queue.js';
import { createRequestsReader } from './read-requests.js';
import { createSessionsReader } from './read-sessions.js';
import type { ReadRequest } from './run-read-thread.js';

const { path, read } = workerData as { path: string; read: ReadRequest };
const db = new Database(path, { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 1000');
  parentPort!.postMessage(answer(read));
} finally {
  db.close();
}

function answer(read: ReadRequest): unknown {
  switch (read.kind) {
    case 'digest': return createDigestReader(db)(read.sessionKey, read.options);
    case 'queue': return createQueueReader(db)();
    case 'sessions': return createSessionsReader(db).list(read.limit);
    case 'session': return createSessionsReader(db).get(read.key);
    case 'requests': return createRequestsReader(db)(read.options);
  }
}
