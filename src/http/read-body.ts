import type { IncomingMessage } from 'node:http';
import { RequestError } from '../common/errors.js';

/** The client went away before its body was complete; there is nobody left to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection before the body was complete');
    this.name = 'ClientGoneError';
  }
}

/** A 413 error when the declared `Content-Length` is over the cap, else `null`. */
export function checkDeclaredLength(req: IncomingMessage, maxBytes: number): RequestError | null {
  const declared = req.headers['content-length'];
  if (declared === undefined || Number(declared) <= maxBytes) return null;
  return new RequestError('payload_too_large', {
    message: `Request body is larger than the allowed maximum of ${maxBytes} bytes.`,
  });
}

/**
 * Reads a request body with a byte cap and a deadline. A declared `Content-Length` over the cap
 * is refused before a byte is read; a streamed (chunked) body is refused as soon as it passes it.
 * @throws RequestError `payload_too_large` (413) or `body_timeout` (408); ClientGoneError.
 */
export function readBody(req: IncomingMessage, options: { maxBytes: number; timeoutMs: number }): Promise<Buffer> {
  const tooLarge = checkDeclaredLength(req, options.maxBytes);
  if (tooLarge !== null) return Promise.reject(tooLarge);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: Error | null): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      if (error !== null) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > options.maxBytes) {
        req.pause();
        finish(
          new RequestError('payload_too_large', {
            message: `Request body is larger than the allowed maximum of ${options.maxBytes} bytes.`,
          }),
        );
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onGone = (): void => finish(new ClientGoneError());
    const timer = setTimeout(() => {
      req.pause();
      finish(
        new RequestError('body_timeout', {
          message: `Request body was not received within ${options.timeoutMs} ms.`,
        }),
      );
    }, options.timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
