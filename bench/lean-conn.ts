/**
 * The lean loader's moving parts: one keep-alive connection (`Conn`) and the run state all
 * connections report into (`Run`). See lean-load.ts.
 */
import { connect, type Socket } from 'node:net';
import { writeRequest, type RequestParts } from './request-parts.js';
import { ResponseParser } from './response-parser.js';

/** Response times in ms, in a growing Float64Array. */
class Latencies {
  #data = new Float64Array(1 << 16);
  #n = 0;
  push(ms: number): void {
    if (this.#n === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#n++] = ms;
  }
  sorted(): Float64Array {
    return this.#data.slice(0, this.#n).sort();
  }
}

/** Shared state of one run; the connections report into it. */
export class Run {
  readonly lat = new Latencies();
  readonly statusCodes: Record<string, number> = {};
  issued = 0;
  ok2xx = 0;
  non2xx = 0;
  errors = 0;
  timeouts = 0;
  firstError: string | null = null;
  sending = true;
  /** Set once every connection is up and the first requests went out. */
  started = false;
  lastDone = 0;
  readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  fail(message: string): void {
    this.errors++;
    this.firstError ??= message;
  }
  /** The body number of the next request, or 0 when nothing is left to send. */
  take(): number {
    return this.sending && this.issued < this.max ? ++this.issued : 0;
  }
  done(status: number, ms: number, now: number): void {
    this.lat.push(ms);
    this.lastDone = now;
    this.statusCodes[status] = (this.statusCodes[status] ?? 0) + 1;
    if (status >= 200 && status < 300) this.ok2xx++;
    else this.non2xx++;
  }
}

/** One keep-alive connection, replaced on loss while there is work left. */
export class Conn {
  #socket: Socket;
  /** performance.now() when the request in flight was sent; -1 when idle. */
  sentAt = -1;
  #closed = false;
  /** Whether the current socket's loss has been counted already. */
  #counted = false;
  readonly #out: Buffer;
  readonly #parser = new ResponseParser();
  readonly #run: Run;
  readonly #req: RequestParts;
  readonly #onIdle: () => void;

  constructor(run: Run, req: RequestParts, onIdle: () => void, onConnect: () => void) {
    this.#run = run;
    this.#req = req;
    this.#onIdle = onIdle;
    this.#out = Buffer.allocUnsafe(req.head.length + 24 + req.prefix.length + 20 + req.suffix.length);
    this.#socket = this.#open(onConnect);
  }

  #open(onConnect: () => void): Socket {
    const s = connect(
      {
        host: '127.0.0.1',
        port: this.#req.port,
        noDelay: true,
        onread: { buffer: this.#req.readBuffer, callback: (n) => this.#onData(this.#req.readBuffer.subarray(0, n)) },
      },
      onConnect,
    );
    this.#counted = false;
    s.on('error', (e) => this.#lose(s, e.message));
    s.on('close', () => {
      if (s !== this.#socket || this.#closed) return;
      // A close between requests is the server's right (it is reconnected); with one in flight it is an error.
      if (this.sentAt >= 0) this.#lose(s, 'connection closed with a request in flight');
      this.sentAt = -1;
      this.#parser.reset();
      // A storm of failures ends the run instead of reconnecting forever.
      if (this.#run.started && this.#run.errors < 100 && this.#run.sending && this.#run.issued < this.#run.max) {
        this.#socket = this.#open(() => this.send());
      } else this.#onIdle();
    });
    return s;
  }

  /** Counts the loss of `s` once, whatever reports it first (error, close, timeout, bad response). */
  #lose(s: Socket, message: string): void {
    if (s !== this.#socket || this.#closed || this.#counted) return;
    this.#counted = true;
    this.#run.fail(message);
    s.destroy();
  }

  /** Sends the next request, or reports idle when none is left. */
  send(): void {
    const n = this.#closed ? 0 : this.#run.take();
    if (n === 0) {
      this.#onIdle();
      return;
    }
    const buf = this.#out;
    const at = writeRequest(this.#req, buf, n);
    this.sentAt = performance.now();
    // Reused only once this request's response is in, so the kernel has long taken these bytes.
    this.#socket.write(buf.subarray(0, at));
  }

  /** Cuts a connection whose response is overdue; 'close' replaces it. */
  checkTimeout(now: number, timeoutMs: number): void {
    if (this.sentAt < 0 || now - this.sentAt <= timeoutMs) return;
    this.sentAt = -1;
    this.#run.timeouts++;
    this.#lose(this.#socket, `no response within ${timeoutMs} ms`);
  }

  close(): void {
    this.#closed = true;
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): boolean {
    const outcome = this.#parser.push(chunk, (status, close) => {
      if (this.sentAt < 0) return false;
      const now = performance.now();
      this.#run.done(status, now - this.sentAt, now);
      this.sentAt = -1;
      if (close) this.#reconnect();
      else this.send();
      return true;
    });
    if (outcome !== null) this.#lose(this.#socket, outcome);
    return true;
  }

  /** The server announced `Connection: close`: continue on a new connection. */
  #reconnect(): void {
    const old = this.#socket;
    this.#parser.reset();
    this.#socket = this.#open(() => this.send());
    old.destroy();
  }
}
