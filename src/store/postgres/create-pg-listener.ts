import pg from 'pg';
import type { WorkSignal } from '../types.js';
import { decodeSignal } from './pg-context.js';

export interface PgListener {
  close(): Promise<void>;
}

const BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * One connection of its own (not from the pool) that LISTENs on the schema's channel and hands
 * every notification to `dispatch`. When the connection drops it reconnects with backoff and then
 * announces runs, deliveries, occurrences, subscriptions and holds, since notifications sent meanwhile were missed.
 */
export async function createPgListener(
  config: pg.ClientConfig,
  channel: string,
  dispatch: (signal: WorkSignal) => void,
  onError: (error: unknown) => void,
): Promise<PgListener> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const c = new pg.Client(config);
    c.on('notification', (n) => {
      if (n.channel !== channel || n.payload === undefined) return;
      const signal = decodeSignal(n.payload);
      if (signal !== null) dispatch(signal);
    });
    c.on('error', (error) => {
      onError(error);
      void c.end().catch(() => undefined);
    });
    c.on('end', () => {
      // Only a connection that was listening reconnects; a failed attempt backs off in `schedule`.
      if (client !== c) return;
      client = undefined;
      if (!closed) schedule(0);
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${channel}"`);
    } catch (error) {
      await c.end().catch(() => undefined);
      throw error;
    }
    // Closed while connecting: this connection must not outlive the store.
    if (closed) await c.end().catch(() => undefined);
    else client = c;
  };

  const schedule = (attempt: number): void => {
    if (closed || retry !== undefined) return;
    retry = setTimeout(
      () => {
        retry = undefined;
        connect().then(
          () => {
            if (closed) return;
            dispatch({ kind: 'runs' });
            dispatch({ kind: 'deliveries' });
            dispatch({ kind: 'published' });
            dispatch({ kind: 'subscriptions' });
            dispatch({ kind: 'holds' });
          },
          (error: unknown) => {
            onError(error);
            schedule(attempt + 1);
          },
        );
      },
      BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)],
    );
    retry.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
