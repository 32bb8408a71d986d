import { request } from 'node:http';
import type { HttpResult } from './http-client.js';

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What a streaming client saw: the response, and any error on its side (a reset shows up here). */
export interface StreamResult {
  res: HttpResult;
  clientError: Error | undefined;
}

/**
 * POSTs `totalBytes` of filler to `path` in 64 KiB writes (honouring back-pressure), declaring
 * the length or sending it chunked, and reads the whole answer. Resolves once the response has
 * ended plus a short grace for a late reset; rejects when an error comes before any response.
 */
export function streamBody(
  port: number,
  path: string,
  options: { totalBytes: number; declareLength: boolean; token: string },
): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    let clientError: Error | undefined;
    let response: HttpResult | undefined;
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${options.token}`,
      'content-type': 'application/json',
    };
    if (options.declareLength) headers['content-length'] = options.totalBytes;
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false });
    const timer = setTimeout(() => req.destroy(new Error('no answer within 30 s')), 30_000);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => (clientError ??= e));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        response = { status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) };
        // Let a late reset, if any, surface before the caller decides.
        setTimeout(() => {
          clearTimeout(timer);
          resolve({ res: response!, clientError });
        }, 100);
      });
    });
    req.on('error', (e) => {
      clientError ??= e;
      if (response === undefined) {
        clearTimeout(timer);
        reject(e);
      }
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    void (async () => {
      for (let sent = 0; sent < options.totalBytes && !req.destroyed; sent += chunk.length) {
        const part = sent + chunk.length > options.totalBytes ? chunk.subarray(0, options.totalBytes - sent) : chunk;
        if (!req.write(part)) {
          await new Promise<void>((r) => {
            const go = (): void => {
              req.off('drain', go);
              req.off('close', go);
              r();
            };
            req.on('drain', go);
            req.on('close', go);
          });
        }
      }
      if (!req.destroyed) req.end();
    })();
  });
}

/**
 * POSTs with `Expect: 100-continue`: headers first, the body only once the server sends
 * `100 Continue`. `continued` tells whether it did.
 */
export function sendExpectingContinue(
  port: number,
  path: string,
  body: string,
  token: string,
): Promise<{ status: number; text: string; json: unknown; continued: boolean }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      timeout: 15_000,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, json: parseJson(text), continued });
        req.destroy();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.flushHeaders();
  });
}
