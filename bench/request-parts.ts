/** The bytes of the loaders' `POST` requests: a fixed head, and a body that differs by a number. */

const CRLFCRLF = Buffer.from('\r\n\r\n');

export interface RequestParts {
  port: number;
  /** Every socket reads into this one buffer (`onread`), skipping the stream machinery: it is parsed at once. */
  readBuffer: Buffer;
  /** Request line and headers up to the Content-Length value. */
  head: Buffer;
  prefix: Buffer;
  suffix: Buffer;
}

/** The parts of `POST path` with a bearer token, whose body is `bodyPrefix + n + bodySuffix`. */
export function requestParts(o: {
  port: number;
  path: string;
  token: string;
  bodyPrefix: string;
  bodySuffix: string;
}): RequestParts {
  return {
    port: o.port,
    readBuffer: Buffer.allocUnsafe(64 * 1024),
    head: Buffer.from(
      `POST ${o.path} HTTP/1.1\r\nHost: 127.0.0.1:${o.port}\r\nAuthorization: Bearer ${o.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: ',
    ),
    prefix: Buffer.from(o.bodyPrefix),
    suffix: Buffer.from(o.bodySuffix),
  };
}

/** Writes request number `n` into `buf`; returns its length. */
export function writeRequest(req: RequestParts, buf: Buffer, n: number): number {
  const { head, prefix, suffix } = req;
  const digits = String(n);
  let at = head.copy(buf, 0);
  at += buf.write(String(prefix.length + digits.length + suffix.length), at, 'latin1');
  at += CRLFCRLF.copy(buf, at);
  at += prefix.copy(buf, at);
  at += buf.write(digits, at, 'latin1');
  at += suffix.copy(buf, at);
  return at;
}
