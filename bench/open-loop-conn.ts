/**
 * One keep-alive connection of the open-loop loader (open-loop-load.ts): it sends the request it
 * is handed (one at a time, no pipelining), reads the response, and reports the request's due
 * time, send time and status back. A lost connection with a request in flight reports that
 * request as failed, then reconnects while the run needs it.
 */
import { connect, type Socket } from 'node:net';
import { writeRequest, type RequestParts } from './request-parts.js';
import { ResponseParser } from './response-parser.js';

export interface OpenLoopEvents {
  /** A response arrived for the request due at `dueAt` and written at `sentAt` (performance.now() ms). */
  answered(conn: OpenLoopConn, status: number, dueAt: number, sentAt: number, now: number): void;
  /** The request in flight was lost (socket error, close, timeout, unparsable response). */
  lost(conn: OpenLoopConn, message: string): void;
  /** The connection is (again) open and idle. */
  ready(conn: OpenLoopConn): void;
}

export class OpenLoopConn {
  #socket: Socket;
  /** performance.now() when the request in flight was due / sent; -1 when idle. */
  #dueAt = -1;
  #sentAt = -1;
  #closed = false;
  readonly #out: Buffer;
  readonly #parser = new ResponseParser();
  readonly #req: RequestParts;
  readonly #events: OpenLoopEvents;

  constructor(req: RequestParts, events: OpenLoopEvents) {
    this.#req = req;
    this.#events = events;
    this.#out = Buffer.allocUnsafe(req.head.length + 24 + req.prefix.length + 20 + req.suffix.length);
    this.#socket = this.#open();
  }

  get busy(): boolean {
    return this.#sentAt >= 0;
  }

  #open(): Socket {
    const s: Socket = connect(
      {
        host: '127.0.0.1',
        port: this.#req.port,
        noDelay: true,
        onread: {
          buffer: this.#req.readBuffer,
          callback: (n: number): boolean => this.#onData(s, this.#req.readBuffer.subarray(0, n)),
        },
      },
      () => this.#events.ready(this),
    );
    s.on('error', (e: Error) => this.#lose(s, e.message));
    s.on('close', () => {
      if (s !== this.#socket || this.#closed) return;
      this.#lose(s, 'connection closed with a request in flight');
      this.#parser.reset();
      this.#socket = this.#open();
    });
    return s;
  }

  /** Reports the request in flight on `s` as lost (once) and drops the socket; 'close' reopens. */
  #lose(s: Socket, message: string): void {
    if (s !== this.#socket || this.#closed) return;
    if (this.#sentAt >= 0) {
      this.#sentAt = -1;
      this.#dueAt = -1;
      this.#events.lost(this, message);
    }
    s.destroy();
  }

  /** Sends request number `n` (its body is `prefix + n + suffix`), due at `dueAt`. */
  send(n: number, dueAt: number): void {
    const buf = this.#out;
    const at = writeRequest(this.#req, buf, n);
    this.#dueAt = dueAt;
    this.#sentAt = performance.now();
    // Reused only once this request's response is in, so the kernel has long taken these bytes.
    this.#socket.write(buf.subarray(0, at));
  }

  /** Cuts the connection when its response is overdue. */
  checkTimeout(now: number, timeoutMs: number): void {
    if (this.#sentAt >= 0 && now - this.#sentAt > timeoutMs)
      this.#lose(this.#socket, `no response within ${timeoutMs} ms`);
  }

  close(): void {
    this.#closed = true;
    this.#socket.destroy();
  }

  #onData(s: Socket, chunk: Buffer): boolean {
    if (s !== this.#socket) return true;
    const outcome = this.#parser.push(chunk, (status, close) => {
      if (this.#sentAt < 0) return false;
      const dueAt = this.#dueAt;
      const sentAt = this.#sentAt;
      this.#sentAt = -1;
      this.#dueAt = -1;
      if (close) {
        // The server ends this connection: carry on over a new one (no request is in flight now).
        this.#parser.reset();
        const old = this.#socket;
        this.#socket = this.#open();
        old.destroy();
      }
      this.#events.answered(this, status, dueAt, sentAt, performance.now());
      return true;
    });
    if (outcome !== null) this.#lose(s, outcome);
    return true;
  }
}
