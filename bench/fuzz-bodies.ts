/** The fuzzer's bodies: payloads with wrong types and poisoned keys, deep nesting, bytes, forms, encodings. */
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '{{payload}}', '__proto__', '../../etc/passwd', '<script>', '\u2028'),
);
const key = fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'));

/** JSON-ish values, with the keys that poison prototypes and the types that validation must refuse. */
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
  ),
})).v;

const payload = fc.record(
  {
    message: text,
    text,
    source: fc.constantFrom('fuzz', 'other'),
    kind: text,
    id: fc.oneof(text, fc.integer()),
    user: fc.record({ name: text }),
    items: fc.array(fc.record({ id: fc.oneof(text, fc.integer()), t: text }), { maxLength: 5 }),
    mode: fc.constantFrom('now', 'next-heartbeat', 'later', 5),
    deliver: fc.oneof(fc.boolean(), text),
    timeoutSeconds: fc.oneof(fc.integer(), fc.double()),
    channel: fc.constantFrom('last', 'telegram', 'nope'),
    model: fc.constantFrom('echo/echo', 'nope/x', '', 'a/b/c'),
    thinking: fc.constantFrom('low', 'nope'),
    thread: text,
    sessionKey: fc.oneof(fc.constantFrom('hook:fuzz', 'agent:main:main', 'main'), text),
    agentId: fc.oneof(fc.constantFrom('main', 'nope', 'MAIN'), text),
    to: fc.oneof(text, fc.integer(), value),
    skip: fc.boolean(),
    wakeMode: fc.constantFrom('now', 'next-heartbeat', 7),
    waitForCompletion: fc.boolean(),
    extra: value,
  },
  { requiredKeys: [] },
);

/** Nested arrays or objects, deeper than the JSON bound or just under it. */
const deep = fc.tuple(fc.integer({ min: 50, max: 5000 }), fc.boolean()).map(([depth, arrays]) => {
  const [open, close] = arrays ? ['[', ']'] : ['{"a":', '}'];
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
});

/** Objects whose keys poison prototypes when merged carelessly. */
const poison = fc.constantFrom(
  '{"__proto__":{"polluted":true},"message":"x"}',
  '{"constructor":{"prototype":{"polluted":true}},"text":"x"}',
  '{"message":"x","__proto__":null}',
  '{"items":[{"__proto__":{"t":"x"}}]}',
  '{"user":{"__proto__":{"name":"x"}},"text":"y"}',
);

export const body = fc.oneof(
  { weight: 6, arbitrary: payload.map((p) => Buffer.from(JSON.stringify(p))) },
  { weight: 2, arbitrary: fc.dictionary(key, value, { maxKeys: 8 }).map((o) => Buffer.from(JSON.stringify(o))) },
  { weight: 1, arbitrary: deep.map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: poison.map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'null',
        '1',
        '"s"',
        '[]',
        '[{}]',
        'true',
        '{',
        '{"a":1,}',
        '1e400',
        '{"a":"\\ud800"}',
        '\ufeff{"text":"bom"}',
      )
      .map((s) => Buffer.from(s)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('{"text":"', '{"message":"'), fc.uint8Array({ minLength: 1, maxLength: 40 }))
      .map(([head, bytes]) => Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from('"}')])),
  },
  {
    weight: 1,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 5 })
      .map((o) => Buffer.from(new URLSearchParams(o).toString())),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'payload=%7B%22type%22%3A%22url_verification%22%2C%22challenge%22%3A%22c%22%7D',
        'payload=%ZZ&text=%',
        'text=a&text=b&__proto__=x',
        'a=1&&=&b',
      )
      .map((s) => Buffer.from(s)),
  },
  { weight: 1, arbitrary: fc.constant(Buffer.from(JSON.stringify({ text: 'x'.repeat(300 * 1024) }))) },
  { weight: 1, arbitrary: fc.constant(Buffer.from(JSON.stringify({ text: 'utf16' }), 'utf16le')) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
);

let bomb: Buffer | undefined;

export type Encoding = 'none' | 'gzip' | 'deflate' | 'gzip-claimed' | 'bomb' | 'odd';

/** A body as sent with a `Content-Encoding`: compressed, only claimed to be, or a bomb. */
export function encode(raw: Buffer, encoding: Encoding): { bytes: Buffer; header: string | null } {
  switch (encoding) {
    case 'none':
      return { bytes: raw, header: null };
    case 'gzip':
      return { bytes: gzipSync(raw), header: 'gzip' };
    case 'deflate':
      return { bytes: deflateSync(raw), header: 'deflate' };
    case 'gzip-claimed':
      return { bytes: raw, header: 'gzip' };
    case 'bomb':
      // 64 MiB of zeros in about 64 KiB: a gateway that inflated bodies would have to bound it.
      bomb ??= gzipSync(Buffer.alloc(64 * 1024 * 1024));
      return { bytes: bomb, header: 'gzip' };
    case 'odd':
      return { bytes: raw, header: 'br, x-unknown, identity' };
  }
}
