import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createThrottledLog } from '../common/create-throttled-log.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import type { RequestHandler } from './create-request-handler.js';
import { createPeerGrouper } from './create-peer-grouper.js';
import { createGroupCounts } from './group-counts.js';
import { connectionShare } from './connection-share.js';
import { OVER_CAPACITY_HELD, readOpenFileLimit, resolveMaxConnections } from './resolve-max-connections.js';
import { errorJson, sendError } from './send-response.js';

/** How long `close()` waits for in-flight requests before cutting their connections. */
const CLOSE_GRACE_MS = 10_000;
/** How long a connection turned away may take to send the request it is answered 503 or 429 to. */
const OVER_CAPACITY_GRACE_MS = 2_000;
const OVER_CAPACITY_RETRY_AFTER_SECONDS = 1;

/** Why a connection is turned away: the gateway's limit, or its client's share of it. */
type ConnectionRefusal = 'over_capacity' | 'too_many_connections';
/**
 * How long a new connection may send nothing before it is closed (`gateway.firstByteTimeoutMs`).
 * Node's `headersTimeout` starts only with the first byte, so without this a connection that sends
 * nothing would hold its place under `maxConnections` for good; a client about to send its request
 * sends it at once.
 */
const FIRST_BYTE_TIMEOUT_MS = 5_000;

export interface HttpServer {
  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, closes idle keep-alive sockets. */
  close(): Promise<void>;
  /** Connections let in and open now (not those turned away). */
  openConnections(): number;
  readonly server: Server;
}

interface HttpServerOptions {
  bodyTimeoutMs: number;
  /** `gateway.maxConnections`; unset: 1000, or the open-file limit minus a margin when lower. */
  maxConnections?: number | undefined;
  /** `gateway.maxConnectionsPerClient`: a cap on a client's share of the free slots (`connectionShare`). */
  maxConnectionsPerClient?: number | undefined;
  /**
   * The group a connection's peer is counted in under `maxConnectionsPerClient`, `null` for a peer
   * that is not capped. @default createPeerGrouper([]) (loopback peers uncapped, no trusted proxies)
   */
  peerGroup?: (peer: string | undefined) => string | null;
  /** For the accept failures that reach the server (out of file descriptors), logged once per interval. */
  log?: Log;
  /** @default Date.now */
  now?: () => number;
  /** Told of each connection turned away (metrics). */
  onTurnedAway?: (refusal: ConnectionRefusal) => void;
  /** Told of each connection closed at capacity to let a newer one in (metrics). */
  onClosedForNewer?: () => void;
  /**
   * A connection that sends nothing for this long, from its opening until its first request's
   * headers are complete, is closed. @default FIRST_BYTE_TIMEOUT_MS
   */
  firstByteTimeoutMs?: number | undefined;
  /** A request's headers must be complete this long after their first byte, else 408 `headers_timeout`. @default 20000 */
  headersTimeoutMs?: number;
}

/**
 * How often Node looks for requests past `headersTimeout` (its default, 30 s, let a client sending
 * a header byte every 2 s hold its connection 48 s against a 20 s limit).
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Binds a request handler to `node:http`, with bounded header and request times and a bounded
 * number of open connections. A new connection past the limit takes the place of the oldest one
 * that has not yet sent a complete request (idle since it opened, or sending its headers slowly),
 * else of the one idle longest between two requests, which is closed without an answer (it asked
 * nothing): connections that ask nothing cannot lock out a client that sends its request. Only
 * when every connection has a request in flight is the newcomer's first request answered 503
 * `over_capacity` with `Retry-After`, then closed. One client (an address; an IPv6 /64) may hold at
 * most its share of the free slots (`connectionShare`); its next connection is answered 429
 * `too_many_connections` the same way, so a few senders cannot take every connection from the
 * rest. At most `OVER_CAPACITY_HELD` connections turned away are held at once: a newer one closes
 * the oldest. A connection that sends nothing for `firstByteTimeoutMs` is closed.
 */
export function createHttpServer(handler: RequestHandler, options: HttpServerOptions): HttpServer {
  const maxConnections = resolveMaxConnections(options.maxConnections, readOpenFileLimit());
  const peerGroup = options.peerGroup ?? createPeerGrouper([]);
  const firstByteMs = options.firstByteTimeoutMs ?? FIRST_BYTE_TIMEOUT_MS;
  /** Connections turned away and still held, oldest first, with why. */
  const turnedAway = new Map<Socket, ConnectionRefusal>();
  /** Connections let in, with their peer group. */
  const admitted = new Map<Socket, string | null>();
  const byGroup = createGroupCounts();
  /** Connections let in whose first request has not come yet, oldest first. */
  const unproven = new Set<Socket>();
  /** Connections let in that answered a request and wait for the next, idle longest first. */
  const between = new Set<Socket>();
  /** Requests in flight by connection (pipelined requests are handed over before the last is answered). */
  const inFlight = new Map<Socket, number>();
  const admit = (
    req: Parameters<RequestHandler>[0],
    res: Parameters<RequestHandler>[1],
    expectsContinue: boolean,
  ): void => {
    const socket = req.socket;
    // The first request has come: from here Node's own timeouts (body, keep-alive) apply, and a
    // caller waiting in silence for its answer (`waitForCompletion`) must not be cut off.
    if (socket.timeout === firstByteMs) socket.setTimeout(0);
    const refusal = turnedAway.get(socket);
    if (refusal === undefined) {
      unproven.delete(socket);
      between.delete(socket);
      inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const left = (inFlight.get(socket) ?? 1) - 1;
        if (left > 0) inFlight.set(socket, left);
        else inFlight.delete(socket);
        if (left <= 0 && admitted.has(socket) && !socket.destroyed) between.add(socket);
      });
      handler(req, res, expectsContinue);
      return;
    }
    const error = new RequestError(refusal, { retryAfterSeconds: OVER_CAPACITY_RETRY_AFTER_SECONDS });
    sendError(req, res, error, { bodyWithheld: expectsContinue, close: true });
  };
  /** Forgets a connection let in (once): it closed, or was closed for a newer one. */
  const release = (socket: Socket): void => {
    if (!admitted.has(socket)) return;
    const group = admitted.get(socket)!;
    admitted.delete(socket);
    unproven.delete(socket);
    between.delete(socket);
    inFlight.delete(socket);
    if (group !== null) byGroup.remove(group);
  };
  const letIn = (socket: Socket, group: string | null): void => {
    admitted.set(socket, group);
    unproven.add(socket);
    if (group !== null) byGroup.add(group);
    socket.once('close', () => release(socket));
  };
  /** Closes the connection a newcomer at capacity replaces; false when every one has a request in flight. */
  const closeForNewer = (): boolean => {
    const victim = unproven.values().next().value ?? between.values().next().value;
    if (victim === undefined) return false;
    release(victim);
    victim.destroy();
    options.onClosedForNewer?.();
    return true;
  };
  const turnAway = (socket: Socket, refusal: ConnectionRefusal): void => {
    options.onTurnedAway?.(refusal);
    turnedAway.set(socket, refusal);
    if (turnedAway.size > OVER_CAPACITY_HELD) {
      const oldest = turnedAway.keys().next().value as Socket;
      turnedAway.delete(oldest);
      oldest.destroy();
    }
    const timer = setTimeout(() => socket.destroy(), OVER_CAPACITY_GRACE_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      turnedAway.delete(socket);
    });
  };
  const overShare = (group: string | null): boolean =>
    group !== null &&
    byGroup.get(group) >=
      connectionShare({
        held: byGroup.get(group),
        open: admitted.size,
        maxConnections,
        maxPerClient: options.maxConnectionsPerClient,
      });
  const server = createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_MS }, (req, res) => admit(req, res, false));
  // Answer `Expect: 100-continue` ourselves, so a body we would refuse is never invited.
  server.on('checkContinue', (req, res) => admit(req, res, true));
  // Any other expectation: Node's own answer is a 417 with no body; every error here is JSON.
  server.on('checkExpectation', (req, res) =>
    sendError(req, res, new RequestError('expectation_failed'), { close: true }),
  );
  server.on('connection', (socket: Socket) => {
    // Node's server destroys a socket whose timeout fires when nothing else listens for it.
    socket.setTimeout(firstByteMs);
    const group = peerGroup(socket.remoteAddress);
    if (overShare(group)) turnAway(socket, 'too_many_connections');
    else if (admitted.size >= maxConnections && !closeForNewer()) turnAway(socket, 'over_capacity');
    else letIn(socket, group);
  });
  // Out of file descriptors, libuv (uv__server_io) as a rule sheds the load itself: it closes a
  // reserve descriptor, accepts and closes every pending connection, reopens the reserve, and tells
  // JavaScript nothing, so no event here can count those clients. Only when the reserve is lost
  // (another thread took the freed descriptor) is the failed accept (EMFILE, ENFILE) emitted on
  // the server, where, unhandled, it would end the process: it is logged and the gateway lives on.
  const reportAcceptFailure =
    options.log === undefined
      ? undefined
      : createThrottledLog(options.log, 'error', 'accepting a connection failed', {
          intervalMs: 10_000,
          now: options.now ?? Date.now,
        });
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (server.listening) reportAcceptFailure?.({ code: error.code, error: error.message });
  });
  server.headersTimeout = options.headersTimeoutMs ?? 20_000;
  // Node's own deadline stays behind ours, so the 408 comes from the handler with our JSON body.
  server.requestTimeout = options.bodyTimeoutMs + 20_000;
  server.keepAliveTimeout = 5_000;
  // Requests Node cannot parse never reach the handler; they still get our JSON error shape.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const answer = new RequestError(
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'headers_too_large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'headers_timeout'
          : 'bad_request',
    );
    const body = errorJson(answer);
    socket.end(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return {
    server,
    openConnections: () => admitted.size,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        // In-flight requests get a grace period; then whatever is left is cut.
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
