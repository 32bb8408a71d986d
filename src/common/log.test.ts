import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from './log.js';

describe('createLog', () => {
  it('writes one JSON object per line with level, message and fields', () => {
    const lines: string[] = [];
    createLog({ write: (l) => lines.push(l) }).info('hello', { n: 1 });
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.endsWith('\n'));
    const obj = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(obj['level'], 'info');
    assert.equal(obj['msg'], 'hello');
    assert.equal(obj['n'], 1);
  });

  it('drops lines below the level', () => {
    const lines: string[] = [];
    const log = createLog({ level: 'warn', write: (l) => lines.push(l) });
    log.info('no');
    log.warn('yes');
    assert.equal(lines.length, 1);
  });

  it('redacts secret-looking keys at any depth, child bindings included', () => {
    const lines: string[] = [];
    const log = createLog({ write: (l) => lines.push(l) }).child({ apiKey: 'k-123' });
    log.error('x', { headers: { authorization: 'Bearer s3cret' }, hooks: { token: 's3cret' }, password: 'p' });
    assert.doesNotMatch(lines[0]!, /s3cret|k-123|"p"/);
    assert.match(lines[0]!, /\[redacted\]/);
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
});
