import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog, isoTime, type LogOptions } from './log.js';

function capture(options: LogOptions = {}): {
  lines: Record<string, unknown>[];
  raw: string[];
  log: ReturnType<typeof createLog>;
} {
  const raw: string[] = [];
  const log = createLog({ ...options, write: (l) => raw.push(l) });
  return {
    raw,
    log,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

describe('createLog', () => {
  it('writes one JSON object per line with a numeric level, the message and the fields', () => {
    const c = capture();
    c.log.info('hello', { n: 1 });
    assert.equal(c.raw.length, 1);
    assert.ok(c.raw[0]!.endsWith('\n'));
    const obj = c.lines[0]!;
    assert.equal(obj['level'], 30);
    assert.equal(obj['msg'], 'hello');
    assert.equal(obj['n'], 1);
    assert.equal(typeof obj['time'], 'string');
  });

  it('uses pino numbers for every level', () => {
    const c = capture({ level: 'debug' });
    c.log.debug('d');
    c.log.info('i');
    c.log.warn('w');
    c.log.error('e');
    assert.deepEqual(
      c.lines.map((l) => l['level']),
      [20, 30, 40, 50],
    );
  });

  it('drops lines below the level', () => {
    const c = capture({ level: 'warn' });
    c.log.info('no');
    c.log.warn('yes');
    assert.deepEqual(
      c.lines.map((l) => l['msg']),
      ['yes'],
    );
  });

  it('redacts secret-looking keys at any depth, child bindings included', () => {
    const c = capture();
    const log = c.log.child({ apiKey: 'k-123' });
    log.error('x', { headers: { authorization: 'Bearer s3cret' }, hooks: { token: 's3cret' }, password: 'p-word' });
    assert.doesNotMatch(c.raw[0]!, /s3cret|k-123|p-word/);
    assert.match(c.raw[0]!, /\[redacted\]/);
  });

  it('writes token counts but redacts tokens', () => {
    const c = capture();
    c.log.info('usage', {
      tokens: 12,
      usage: { inputTokens: 3, outputTokens: 9, max_tokens: 100, tokenCount: 12, token_usage: 7 },
      apiToken: 'tok-s3cret',
      botToken: 'bot-s3cret',
      accessToken: 'acc-s3cret',
      'x-hookgate-token': 'hdr-s3cret',
    });
    const obj = c.lines[0]!;
    assert.equal(obj['tokens'], 12);
    assert.deepEqual(obj['usage'], {
      inputTokens: 3,
      outputTokens: 9,
      max_tokens: 100,
      tokenCount: 12,
      token_usage: 7,
    });
    assert.doesNotMatch(c.raw[0]!, /s3cret/);
    for (const k of ['apiToken', 'botToken', 'accessToken', 'x-hookgate-token']) assert.equal(obj[k], '[redacted]');
  });

  it('redacts a secret nested deeper than the old four-level cut-off', () => {
    const c = capture();
    c.log.info('deep', { a: { b: { c: { d: { e: { f: { clientSecret: 'deep-s3cret' } } } } } } });
    assert.doesNotMatch(c.raw[0]!, /deep-s3cret/);
    assert.match(c.raw[0]!, /\[redacted\]/);
  });

  it('cuts objects nested past the depth bound instead of writing them unredacted', () => {
    let nested: Record<string, unknown> = { token: 'bottom-s3cret', note: 'bottom-note' };
    for (let i = 0; i < 20; i++) nested = { n: nested };
    const c = capture();
    c.log.info('very deep', { nested });
    assert.doesNotMatch(c.raw[0]!, /bottom-/);
    assert.match(c.raw[0]!, /\[too deep\]/);
  });

  it('redacts payloads and bodies by path, at the top and one level down', () => {
    const c = capture();
    c.log.warn('req', {
      payload: { text: 'PAYLOAD-1' },
      request: { body: 'PAYLOAD-2', headers: { cookie: 'c=1', 'x-hookgate-token': 't' } },
    });
    assert.doesNotMatch(c.raw[0]!, /PAYLOAD-1|PAYLOAD-2|c=1|"t"/);
    const obj = c.lines[0]!;
    assert.equal(obj['payload'], '[redacted]');
    assert.equal((obj['request'] as Record<string, unknown>)['body'], '[redacted]');
  });

  it('writes an error as type, message, code and stack', () => {
    const c = capture();
    const err = Object.assign(new Error('boom'), { code: 'E_BOOM' });
    c.log.error('failed', { err });
    const e = c.lines[0]!['err'] as Record<string, unknown>;
    assert.equal(e['message'], 'boom');
    assert.equal(e['code'], 'E_BOOM');
    assert.match(String(e['stack']), /boom/);
  });

  it('survives a circular object', () => {
    const c = capture();
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    c.log.info('loop', { a });
    assert.match(c.raw[0]!, /\[circular\]/);
  });

  it('holds back identical errors within the interval and then writes one count', () => {
    let t = 0;
    const c = capture({ now: () => t, repeatIntervalMs: 1_000 });
    for (let i = 0; i < 5; i++) c.log.error('store write failed', { attempt: i });
    assert.equal(c.raw.length, 1, 'only the first passes inside the interval');
    t = 1_500;
    c.log.error('store write failed', { attempt: 5 });
    assert.equal(c.raw.length, 2);
    const summary = c.lines[1]!;
    assert.equal(summary['msg'], 'store write failed (repeated 5 times)');
    assert.equal(summary['repeated'], 5);
    assert.equal(summary['level'], 50);
  });

  it('keeps apart lines with one message but different errors', () => {
    const c = capture({ now: () => 0, repeatIntervalMs: 1_000 });
    c.log.error('request failed', { err: new Error('transform a threw') });
    c.log.error('request failed', { err: new Error('transform b threw') });
    c.log.error('request failed', { err: new Error('transform a threw') });
    assert.deepEqual(
      c.lines.map((l) => (l['err'] as Record<string, unknown>)['message']),
      ['transform a threw', 'transform b threw'],
    );
  });

  it('never holds back info lines or different messages', () => {
    const c = capture({ now: () => 0, repeatIntervalMs: 1_000 });
    for (let i = 0; i < 3; i++) c.log.info('request');
    c.log.warn('a');
    c.log.warn('b');
    assert.equal(c.raw.length, 5);
  });

  it('writes held-back counts on flush', () => {
    const c = capture({ now: () => 0, repeatIntervalMs: 60_000 });
    c.log.warn('channel down');
    c.log.warn('channel down');
    c.log.warn('channel down');
    c.log.flush();
    assert.deepEqual(
      c.lines.map((l) => l['msg']),
      ['channel down', 'channel down (repeated 2 times)'],
    );
  });

  it('scrubs logged errors: message, stack and cause', () => {
    const lines: string[] = [];
    const log = createLog({ write: (l) => lines.push(l), scrub: (t) => t.replaceAll('sk-live-123', '[redacted]') });
    const cause = new Error('upstream echoed sk-live-123');
    log.error('call failed', { err: new Error('Incorrect API key provided: sk-live-123', { cause }) });
    assert.doesNotMatch(lines[0]!, /sk-live-123/);
    const obj = JSON.parse(lines[0]!) as { err: { message: string; cause: { message: string } } };
    assert.equal(obj.err.message, 'Incorrect API key provided: [redacted]');
    assert.equal(obj.err.cause.message, 'upstream echoed [redacted]');
  });

  it('writes a fixed line with the level, time, pid, bindings and message every line has', () => {
    const c = capture();
    const line = c.log.child({ part: 'http' }).fixedLine('info', 'hook request');
    assert.notEqual(line, null);
    line!('"status":200,"ms":3');
    c.log.info('hook request', { status: 200, ms: 3 });
    const [fixed, usual] = c.lines as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual(Object.keys(fixed), ['level', 'time', 'pid', 'part', 'status', 'ms', 'msg']);
    assert.deepEqual({ ...fixed, time: 0 }, { ...usual, part: 'http', time: 0 });
    assert.ok(c.raw[0]!.endsWith('}\n'));
  });

  it('has no fixed line writer below its level', () => {
    assert.equal(capture({ level: 'warn' }).log.fixedLine('info', 'hook request'), null);
    assert.notEqual(capture({ level: 'warn' }).log.fixedLine('warn', 'x'), null);
  });

  it('writes times as toISOString does, across seconds and their first milliseconds', () => {
    for (const ms of [
      0, 7, 99, 999, 1_000, 1_001, 1_764_630_000_000, 1_764_630_000_042, 1_764_630_059_999, 1_764_630_060_000,
    ])
      assert.equal(isoTime(ms), new Date(ms).toISOString());
  });
});
