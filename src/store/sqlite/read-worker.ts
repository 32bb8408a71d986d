/**
 * A read thread (run-read-thread.ts): makes one read that may cover a million rows (a backlog's
 * digest, the queue depths under a flood) on a read-only connection of its own, so the serving
 * thread never stops for it, posts the answer, and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createDigestReader } from './read-digest.js';
import { createQueueReader } from './read-queue.js';
import type { ReadRequest } from './run-read-thread.js';

const { path, read } = workerData as { path: string; read: ReadRequest };
const db = new Database(path, { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 1000');
  parentPort!.postMessage(read.kind === 'digest' ? createDigestReader(db)(read.sessionKey, read.options) : createQueueReader(db)());
} finally {
  db.close();
}
