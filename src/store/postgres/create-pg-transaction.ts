import type pg from 'pg';
import { isStoreUnavailable } from '../is-store-unavailable.js';

/** The SQLSTATE of a statement that waited out `lock_timeout`: its connection is sound. */
const LOCK_NOT_AVAILABLE = '55P03';
/** Tries of a transaction whose connection was lost before its commit was sent. */
export const TX_ATTEMPTS = 3;
/**
 * SQLSTATEs of a backend that went away: terminated by an administrator or a failover (57P01),
 * the server crashed (57P02) or is not accepting connections (57P03), and class 08.
 */
const LOST_STATES = new Set(['57P01', '57P02', '57P03']);
/** Socket failures of a connection that was open. */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** What `pg` throws without a code on a connection that ended, or that an earlier error left unusable. */
const LOST_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed)/;

/**
 * True when `error` says the connection itself was lost (its backend ended, its socket cut), as
 * opposed to a statement the server refused: on a new connection the same work may well succeed.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (LOST_STATES.has(code) || LOST_CODES.has(code) || /^08...$/.test(code))) return true;
  return typeof message === 'string' && LOST_MESSAGES.test(message);
}

/** Runs `fn` in a transaction on one pooled connection; rolls back when it throws. */
type PgTransaction = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/**
 * Transactions on `pool`'s connections. Every connection of the pool gets an `error` listener for
 * its whole life: `pg-pool` listens only while a connection is idle in the pool, so a backend
 * ended while a connection is checked out (a transaction between two statements, or the socket's
 * end read just after a statement's error) would be an `error` event nobody handles, which ends
 * the process. A connection that failed is released as broken, never handed to the next caller; a
 * transaction whose connection was lost before its `COMMIT` was sent did nothing and is tried
 * again on another, up to `TX_ATTEMPTS` in all (a backend ended by a failover or an administrator
 * takes the pool's idle connections with it, a few of which may be handed out before their end is
 * read). Lost during `COMMIT`, it may have committed: the caller hears of it.
 */
export function createPgTransaction(pool: pg.Pool): PgTransaction {
  const lost = new WeakMap<pg.ClientBase, Error>();
  pool.on('connect', (client) => {
    client.on('error', (error: Error) => {
      if (!lost.has(client)) lost.set(client, error);
    });
  });
  return async (fn) => {
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      let broken: Error | undefined;
      let committing = false;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        committing = true;
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that failed is not asked to roll back: closing it does, on the server.
        broken = lost.get(client);
        if (
          broken === undefined &&
          isStoreUnavailable(error) &&
          (error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE
        )
          broken = error as Error;
        if (broken === undefined) await client.query('ROLLBACK').catch(() => undefined);
        const retry = !committing && attempt < TX_ATTEMPTS && (isConnectionLost(error) || lost.has(client));
        if (!retry) throw error;
      } finally {
        client.release(broken);
      }
    }
  };
}
