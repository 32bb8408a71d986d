/**
 * The fuzzer's cases: random requests as raw bytes (method, path, headers, framing, encoding,
 * body), drawn by fast-check around what the gateway serves, so most cases get past the first
 * checks and reach the parsers, the mappings and their templates.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { body, encode, type Encoding } from './fuzz-bodies.js';

export const FUZZ_HOOK_TOKEN = 'fuzz-hook-token-0123456789abcdef';
export const FUZZ_GATEWAY_TOKEN = 'fuzz-gateway-token-0123456789abcdef';
export const FUZZ_GITHUB_SECRET = 'fuzz-github-secret-0123456789';
export const FUZZ_SLACK_SECRET = 'fuzz-slack-secret-0123456789';

/**
 * The `tx` mapping's transform: hands fields of the payload back as the action's, whatever their
 * type (the gateway must validate them), and never throws (a transform that throws is a 500 by
 * contract, not a finding).
 */
export const FUZZ_TRANSFORM = `export default function (input) {
  try {
    const p = input.payload ?? {};
    if (p.skip === true) return null;
    return { message: p.message, text: p.text, mode: p.mode, channel: p.channel, to: p.to, deliver: false,
      sessionKey: p.sessionKey, agentId: p.agentId, model: p.model, timeoutSeconds: p.timeoutSeconds, kind: p.kind };
  } catch {
    return undefined;
  }
}
`;

/** The mappings the fuzzed gateway serves: templates over payload, headers and query; forEach; signed senders. */
export const FUZZ_MAPPINGS = [
  {
    id: 'tpl',
    match: { path: 'tpl' },
    action: 'agent',
    name: 'Tpl {{payload.kind}}',
    messageTemplate:
      'From {{payload.user.name}} ({{headers.x-user}}, {{query.q}}): {{payload.text}} {{payload.items[0].id}}',
    sessionKey: 'hook:tpl:{{payload.id}}',
    model: '{{payload.model}}',
    thinking: '{{payload.thinking}}',
    deliver: false,
    coalesce: { key: '{{payload.thread}}', windowSeconds: 1 },
  },
  {
    id: 'each',
    match: { path: 'each' },
    action: 'wake',
    forEach: { path: 'items', idPath: 'id' },
    textTemplate: '{{item.t}}',
  },
  { id: 'src', match: { source: 'fuzz' }, action: 'wake', textTemplate: '{{payload}}' },
  { id: 'tx', match: { path: 'tx' }, transform: { module: 'fuzz-transform.mjs' } },
  { id: 'gh', match: { path: 'gh' }, verify: { kind: 'github', secret: FUZZ_GITHUB_SECRET }, deliver: false },
  {
    id: 'slack',
    match: { path: 'slack' },
    action: 'wake',
    verify: { kind: 'slack', secret: FUZZ_SLACK_SECRET, required: true },
  },
];

const PATHS = [
  '/hooks/wake',
  '/hooks/agent',
  '/hooks/tpl',
  '/hooks/each',
  '/hooks/tx',
  '/hooks/gh',
  '/hooks/slack',
  '/hooks/anything',
  '/hooks/',
  '/hooks',
  '/hooks//wake',
  '/hooks/wake/',
  '/HOOKS/wake',
  '/hooks/%2e%2e/wake',
  '/hooks/tpl/../wake',
  '/healthz',
  '/readyz',
  '/metrics',
  '/admin/api/requests',
  '/admin/api/runs?limit=-1',
  '/admin/',
  '/',
  '*',
  'http://127.0.0.1/hooks/wake',
];

type Auth = 'bearer' | 'x-hookgate-token' | 'x-openclaw-token' | 'wrong' | 'none' | 'query' | 'gateway' | 'twice';
type Framing = 'length' | 'chunked' | 'none' | 'short' | 'long' | 'twice' | 'chunked-bad';

export interface FuzzCase {
  method: string;
  path: string;
  auth: Auth;
  contentType: string | null;
  encoding: Encoding;
  framing: Framing;
  sign: 'github' | 'github-bad' | 'slack' | 'none';
  extraHeaders: Array<[string, string]>;
  body: Buffer;
}

const headerName = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/);
const headerValue = fc.oneof(
  fc.stringMatching(/^[\x20-\x7e]{0,60}$/),
  fc.constantFrom('\u00e9t\u00e9', '\u00ff\u00fe', ''),
);

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.record({
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant('POST') },
    { weight: 2, arbitrary: fc.constantFrom('GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'post', 'TRACE') },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
  ),
  path: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...PATHS) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...PATHS), fc.stringMatching(/^[\x21-\x7e]{0,30}$/))
        .map(([p, tail]) => `${p}${tail.replace(/[#\s]/g, '')}`),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('?q=', '?token=', '?q=%ZZ&q=', '?q[]=1&q=', '?'), fc.string({ maxLength: 20 }))
        .map(([q, v]) => `/hooks/tpl${q}${encodeURIComponent(v)}`),
    },
  ),
  auth: fc.constantFrom<Auth>(
    'bearer',
    'bearer',
    'bearer',
    'x-hookgate-token',
    'x-openclaw-token',
    'wrong',
    'none',
    'query',
    'gateway',
    'twice',
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/x-www-form-urlencoded',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    ';;;',
    '',
    null,
  ),
  encoding: fc.constantFrom<Encoding>('none', 'none', 'none', 'none', 'gzip', 'deflate', 'gzip-claimed', 'odd', 'bomb'),
  framing: fc.oneof(
    { weight: 24, arbitrary: fc.constant<Framing>('length') },
    { weight: 3, arbitrary: fc.constantFrom<Framing>('chunked', 'none', 'short', 'twice', 'chunked-bad') },
    // A body shorter than its Content-Length is waited for (up to the 500 ms body deadline, or the
    // 5 s drain of a refusal), so these are kept rare to keep the run short.
    { weight: 1, arbitrary: fc.constant<Framing>('long') },
  ),
  sign: fc.constantFrom('github', 'github-bad', 'slack', 'none', 'none'),
  extraHeaders: fc.array(
    fc.oneof(
      fc.tuple(headerName, headerValue),
      fc.tuple(
        fc.constantFrom('idempotency-key', 'x-user', 'x-github-delivery', 'expect', 'x-slack-retry-num'),
        headerValue,
      ),
      fc.constant<[string, string]>(['expect', '100-continue']),
      fc.constant<[string, string]>(['x-forwarded-for', '1.2.3.4, ::1, nonsense']),
    ),
    { maxLength: 4 },
  ),
  body,
});

/** The raw bytes of a case's request to `port`, sent for `client` (an `X-Forwarded-For` hop). */
export function requestBytes(c: FuzzCase, port: number, client: string): Buffer {
  const { bytes, header: contentEncoding } = encode(c.body, c.encoding);
  const lines: string[] = [];
  const path = c.auth === 'query' ? `${c.path}${c.path.includes('?') ? '&' : '?'}token=${FUZZ_HOOK_TOKEN}` : c.path;
  lines.push(
    `${c.method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Connection: close',
    `X-Forwarded-For: ${client}`,
  );
  if (c.auth === 'bearer' || c.auth === 'twice') lines.push(`Authorization: Bearer ${FUZZ_HOOK_TOKEN}`);
  if (c.auth === 'twice') lines.push('Authorization: Bearer other');
  if (c.auth === 'x-hookgate-token') lines.push(`x-hookgate-token: ${FUZZ_HOOK_TOKEN}`);
  if (c.auth === 'x-openclaw-token') lines.push(`x-openclaw-token: ${FUZZ_HOOK_TOKEN}`);
  if (c.auth === 'wrong') lines.push('Authorization: Bearer wrong-token');
  if (c.auth === 'gateway') lines.push(`Authorization: Bearer ${FUZZ_GATEWAY_TOKEN}`);
  if (c.contentType !== null) lines.push(`Content-Type: ${c.contentType}`);
  if (contentEncoding !== null) lines.push(`Content-Encoding: ${contentEncoding}`);
  if (c.sign === 'github' || c.sign === 'github-bad') {
    const mac = createHmac('sha256', FUZZ_GITHUB_SECRET).update(bytes).digest('hex');
    lines.push(`X-Hub-Signature-256: sha256=${c.sign === 'github' ? mac : mac.replace(/^./, '0')}`);
  }
  if (c.sign === 'slack') {
    const ts = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', FUZZ_SLACK_SECRET).update(`v0:${ts}:`).update(bytes).digest('hex');
    lines.push(`X-Slack-Request-Timestamp: ${ts}`, `X-Slack-Signature: v0=${mac}`);
  }
  for (const [name, v] of c.extraHeaders) lines.push(`${name}: ${v}`);
  let payload = bytes;
  switch (c.framing) {
    case 'length':
      lines.push(`Content-Length: ${bytes.length}`);
      break;
    case 'short':
      lines.push(`Content-Length: ${Math.max(0, bytes.length - 1)}`);
      break;
    case 'long':
      lines.push(`Content-Length: ${bytes.length + 10}`);
      break;
    case 'twice':
      lines.push(`Content-Length: ${bytes.length}`, `Content-Length: ${bytes.length + 1}`);
      break;
    case 'chunked':
    case 'chunked-bad': {
      lines.push('Transfer-Encoding: chunked');
      const size = c.framing === 'chunked' ? bytes.length.toString(16) : 'zz';
      payload = Buffer.concat([Buffer.from(`${size}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]);
      break;
    }
    case 'none':
      break;
  }
  // Header values go out as latin1, so a value can carry bytes that are not UTF-8.
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}
