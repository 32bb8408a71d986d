import assert from 'node:assert/strict';
import type { HttpResult, RawResult } from './http-client.js';
import { HOOK_TOKEN } from './temp-config.js';

/** The JSON error body of DESIGN §3. */
export interface ErrorBody {
  ok: false;
  error: string;
  code: string;
  issues?: Array<{ path: string; message: string }>;
}

type AnyResult = HttpResult | RawResult;

function header(res: AnyResult, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Asserts an error response: the status, `Content-Type: application/json; charset=utf-8`, a body
 * `{ok:false, error:<sentence>, code}` with the expected code, and no trace of the hook token.
 */
export function assertError(res: AnyResult, status: number, code: string): ErrorBody {
  const context = `${res.status} ${res.text}`;
  assert.equal(res.status, status, context);
  assert.equal(header(res, 'content-type'), 'application/json; charset=utf-8', context);
  const body = res.json as ErrorBody;
  assert.ok(body !== null && typeof body === 'object', `error body is a JSON object: ${context}`);
  assert.equal(body.ok, false, context);
  assert.equal(body.code, code, context);
  assert.equal(typeof body.error, 'string', context);
  assert.ok(body.error.length > 0, context);
  assert.ok(!res.text.includes(HOOK_TOKEN), `the response must not echo the token: ${context}`);
  return body;
}

/** Asserts a 400 `invalid_payload` whose issues name `path` (and returns all issue paths). */
export function assertInvalidField(res: AnyResult, path: string, code = 'invalid_payload'): string[] {
  const body = assertError(res, 400, code);
  assert.ok(Array.isArray(body.issues), `issues[] present: ${res.text}`);
  const paths = body.issues.map((i) => i.path);
  assert.ok(paths.includes(path), `issues name "${path}": ${res.text}`);
  for (const issue of body.issues) assert.equal(typeof issue.message, 'string', res.text);
  return paths;
}
