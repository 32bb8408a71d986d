import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestError } from '../common/errors.js';
import type { RequestHandler } from './create-request-handler.js';
import { errorJson } from './send-response.js';

/** How long `close()` waits for in-flight requests before cutting their connections. */
const CLOSE_GRACE_MS = 10_000;

export interface HttpServer {
  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, closes idle keep-alive sockets. */
  close(): Promise<void>;
  readonly server: Server;
}

/** Binds a request handler to `node:http`, with bounded header and request times. */
export function createHttpServer(handler: RequestHandler, options: { bodyTimeoutMs: number }): HttpServer {
  const server = createServer((req, res) => handler(req, res));
  // Answer `Expect: 100-continue` ourselves, so a body we would refuse is never invited.
  server.on('checkContinue', (req, res) => handler(req, res, true));
  server.headersTimeout = 20_000;
  // Node's own deadline stays behind ours, so the 408 comes from the handler with our JSON body.
  server.requestTimeout = options.bodyTimeoutMs + 20_000;
  server.keepAliveTimeout = 5_000;
  // Requests Node cannot parse never reach the handler; they still get our JSON error shape.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const answer = new RequestError(error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'bad_request');
    const body = errorJson(answer);
    socket.end(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return {
    server,
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
