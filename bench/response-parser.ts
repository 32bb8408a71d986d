/**
 * Incremental HTTP/1.1 response framing for the lean loader: finds each response's end from the
 * status line, the blank line and `Content-Length`, whether a response arrives split over several
 * chunks or several arrive in one. Bodies are skipped, not kept.
 */
const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('content-length:');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding:');
const CONNECTION = Buffer.from('connection:');
const CLOSE = Buffer.from('close');
const MAX_HEADER_BYTES = 64 * 1024;

/** Case-insensitive match of lowercase ASCII `name` at `at` (`| 0x20` folds letters; `-` and `:` survive it). */
function headerIs(buf: Buffer, at: number, end: number, name: Buffer): boolean {
  if (at + name.length > end) return false;
  for (let i = 0; i < name.length; i++) if ((buf[at + i]! | 0x20) !== name[i]) return false;
  return true;
}

const skipSpace = (buf: Buffer, i: number, end: number): number => {
  while (i < end && (buf[i] === 32 || buf[i] === 9)) i++;
  return i;
};

export interface Framing {
  /** Content-Length: -1 if absent, -2 for a chunked body. */
  length: number;
  /** `Connection: close`: the server closes the socket after this response. */
  close: boolean;
}

/** What the header block `[start, end)` says about the body and the connection. */
export function framing(buf: Buffer, start: number, end: number): Framing {
  const f: Framing = { length: -1, close: false };
  for (let nl = buf.indexOf(10, start); nl !== -1 && nl < end; nl = buf.indexOf(10, nl + 1)) {
    const at = nl + 1;
    if (headerIs(buf, at, end, CONTENT_LENGTH)) {
      let i = skipSpace(buf, at + CONTENT_LENGTH.length, end);
      let n = 0;
      const first = i;
      for (; i < end && buf[i]! >= 48 && buf[i]! <= 57; i++) n = n * 10 + (buf[i]! - 48);
      if (i > first) f.length = n;
    } else if (headerIs(buf, at, end, TRANSFER_ENCODING)) {
      f.length = -2;
      return f;
    } else if (headerIs(buf, at, end, CONNECTION)) {
      f.close = headerIs(buf, skipSpace(buf, at + CONNECTION.length, end), end, CLOSE);
    }
  }
  return f;
}

/** The status code of an `HTTP/1.x NNN` line at `start`; 0 when it is not one. */
export function statusCode(buf: Buffer, start: number): number {
  // "HTTP/1.1 200": 'H' at 0, '/' at 4, ' ' at 8, digits at 9..11.
  if (buf.length < start + 12 || buf[start] !== 72 || buf[start + 4] !== 47 || buf[start + 8] !== 32) return 0;
  const a = buf[start + 9]! - 48;
  const b = buf[start + 10]! - 48;
  const c = buf[start + 11]! - 48;
  return a >= 1 && a <= 9 && b >= 0 && b <= 9 && c >= 0 && c <= 9 ? a * 100 + b * 10 + c : 0;
}

export class ResponseParser {
  /** Unparsed header bytes carried over from the previous chunk. */
  #left: Buffer | null = null;
  /** Body bytes of the current response still to skip; -1 while reading headers. */
  #bodyLeft = -1;
  #status = 0;
  #close = false;

  reset(): void {
    this.#left = null;
    this.#bodyLeft = -1;
  }

  /**
   * Feeds one chunk (read only during this call: it may be overwritten afterwards); calls
   * `onResponse(status, close)` for each complete response (it returns false for a response
   * nobody asked for). Returns null, or what was wrong with the stream (then reset it).
   */
  push(chunk: Buffer, onResponse: (status: number, close: boolean) => boolean): string | null {
    let buf = chunk;
    if (this.#left !== null) {
      buf = Buffer.concat([this.#left, chunk]);
      this.#left = null;
    }
    let at = 0;
    while (at < buf.length) {
      if (this.#bodyLeft < 0) {
        const end = buf.indexOf(CRLFCRLF, at);
        if (end === -1) {
          if (buf.length - at > MAX_HEADER_BYTES) return 'response headers too large';
          // Copied: the loader reads into one reused buffer.
          this.#left = Buffer.from(buf.subarray(at));
          return null;
        }
        this.#status = statusCode(buf, at);
        if (this.#status === 0) return 'not an HTTP/1.x status line';
        const f = framing(buf, at, end);
        let length = f.length;
        this.#close = f.close;
        if (length === -2) return 'chunked responses are not supported';
        if (length === -1) {
          if (this.#status !== 204 && this.#status !== 304) return 'response without Content-Length';
          length = 0;
        }
        this.#bodyLeft = length;
        at = end + 4;
      }
      const take = Math.min(this.#bodyLeft, buf.length - at);
      at += take;
      this.#bodyLeft -= take;
      if (this.#bodyLeft > 0) return null;
      this.#bodyLeft = -1;
      if (!onResponse(this.#status, this.#close)) return 'response without a request';
    }
    return null;
  }
}
