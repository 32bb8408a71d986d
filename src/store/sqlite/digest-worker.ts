/**
 * The digest thread (create-sqlite-digest.ts): reads one digest of a session's backlog on a
 * read-only connection of its own, so reading a million pending events never holds the serving
 * thread, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createDigestReader } from './read-digest.js';
import type { DigestRequest } from './create-sqlite-digest.js';

const { path, sessionKey, options } = workerData as DigestRequest;
const db = new Database(path, { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 1000');
  parentPort!.postMessage(createDigestReader(db)(sessionKey, options));
} finally {
  db.close();
}
