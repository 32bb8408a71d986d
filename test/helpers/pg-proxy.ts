import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';

/**
 * A TCP proxy on 127.0.0.1 in front of a PostgreSQL server, for tests of what a gateway does when
 * its database misbehaves, without touching the server others use: it can stop passing the
 * server's answers on (a network that drops packets), end the backends of its own connections
 * (`pg_terminate_backend`, as an administrator or a failover would), and go away altogether
 * (connections refused, as while the server restarts) and come back on the same port.
 */
export interface PgProxy {
  /** The target's URL with the proxy's address: what the gateway is given. */
  url: string;
  /** While true, what the server sends is dropped; nothing is closed. */
  frozen: boolean;
  /**
   * Ends the backend of every connection open through the proxy, and only those (found by the
   * client port each has on the server); resolves with how many were ended.
   */
  terminateBackends(): Promise<number>;
  /** The queries the backends behind the proxy are running or ran last (`pg_stat_activity.query`). */
  backendQueries(): Promise<string[]>;
  /** Ends every backend behind it, cuts every link and stops listening: new connections are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Cuts every link and stops listening for good. */
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket;
}

export async function createPgProxy(targetUrl: string): Promise<PgProxy> {
  const target = new URL(targetUrl);
  const links = new Set<Link>();
  let server: Server | undefined;
  let port = 0;

  const accept = (client: Socket): void => {
    const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) });
    const link: Link = { client, upstream };
    links.add(link);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!proxy.frozen) client.write(chunk);
    });
    const end = (): void => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  };
  const listen = async (): Promise<void> => {
    const s = createServer(accept);
    s.listen(port, '127.0.0.1');
    await once(s, 'listening');
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stopListening = async (): Promise<void> => {
    const s = server;
    server = undefined;
    for (const link of links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    links.clear();
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  /** Runs `sql` with the client ports and addresses of the proxy's upstream connections as $1 and $2. */
  const onBackends = async (sql: string): Promise<pg.QueryResult> => {
    const upstream = [...links].map((l) => l.upstream).filter((u) => u.localPort !== undefined);
    const admin = new pg.Client({ connectionString: targetUrl });
    await admin.connect();
    try {
      return await admin.query(
        `${sql} FROM pg_stat_activity a JOIN unnest($1::int[], $2::inet[]) AS c (port, addr)
          ON a.client_port = c.port AND a.client_addr = c.addr
          WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()`,
        [upstream.map((u) => u.localPort), upstream.map((u) => u.localAddress)],
      );
    } finally {
      await admin.end();
    }
  };

  await listen();
  const via = new URL(targetUrl);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  const proxy: PgProxy = {
    url: via.href,
    frozen: false,
    async terminateBackends() {
      const { rows } = await onBackends('SELECT pg_terminate_backend(a.pid) AS ended');
      return rows.filter((r: { ended: boolean }) => r.ended).length;
    },
    async backendQueries() {
      const { rows } = await onBackends('SELECT a.query');
      return rows.map((r: { query: string }) => r.query);
    },
    async cut() {
      await proxy.terminateBackends();
      await stopListening();
    },
    async restore() {
      if (server === undefined) await listen();
    },
    close: stopListening,
  };
  return proxy;
}
