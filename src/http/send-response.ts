import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { RequestError } from '../common/errors.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** How long, and how many bytes, we keep reading an unwanted body so the client sees our answer. */
const DRAIN_MS = 5_000;
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

/** Writes a JSON body with an exact Content-Length. */
export function sendJson(res: ServerResponse, status: number, body: string, headers?: OutgoingHttpHeaders): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * Answers 405 (`Allow: GET, HEAD`) to any other method on a read-only route (`/healthz`, `/readyz`,
 * `/metrics`), reading and dropping whatever body came; `true` when it did.
 */
export function refuseUnlessGetOrHead(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  req.resume();
  const error = new RequestError('method_not_allowed', { message: 'Only GET and HEAD are accepted here.' });
  sendJson(res, 405, errorJson(error), { allow: 'GET, HEAD' });
  return true;
}

/** The public JSON of an error: `{ok:false, error, code, issues?}`. Never internals. */
export function errorJson(error: RequestError): string {
  const body: { ok: false; error: string; code: string; issues?: unknown } = {
    ok: false,
    error: error.message,
    code: error.code,
  };
  if (error.issues !== undefined) body.issues = error.issues;
  return JSON.stringify(body);
}

function errorHeaders(error: RequestError): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  if (error.code === 'method_not_allowed') headers['allow'] = 'POST';
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return headers;
}

/**
 * Sends an error response. When the request body has not been fully received (413, 408, or a
 * rejection before the body was read), the answer is written with `Connection: close` and the
 * rest of the body is read and discarded (bounded in time and bytes) before the socket closes:
 * closing a socket with unread data makes the kernel send RST, and the client would see a reset
 * instead of our status. `close` ends the connection after the answer even when the body was read.
 */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  error: RequestError,
  options: { bodyWithheld?: boolean; close?: boolean } = {},
): void {
  const body = errorJson(error);
  const headers = errorHeaders(error);
  if (req.complete || req.readableEnded) {
    if (options.close === true) headers['connection'] = 'close';
    sendJson(res, error.status, body, headers);
    return;
  }
  headers['connection'] = 'close';
  res.writeHead(error.status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers });
  res.write(body);
  // A client that sent `Expect: 100-continue` and was not told to continue sends no body.
  if (options.bodyWithheld === true) {
    res.end();
    return;
  }
  let drained = 0;
  let ended = false;
  const end = (destroy: boolean): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('close', onEnd);
    req.off('error', onEnd);
    res.end();
    if (destroy) res.once('finish', () => req.socket.destroy());
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) end(true);
  };
  const onEnd = (): void => end(false);
  const timer = setTimeout(() => end(true), DRAIN_MS);
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('close', onEnd);
  req.on('error', onEnd);
  req.resume();
}
