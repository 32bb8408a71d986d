import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REASON_CHARS, parseAckAsk, parseLeaseAnswer, parseLeaseAsk } from './relay-wire.js';

const wire = {
  id: 'rel_1',
  hook: 'github',
  url: '/hooks/github',
  headers: { 'X-GitHub-Event': 'push' },
  body: Buffer.from('{"a":1}').toString('base64'),
  auth: 'signature',
  receivedAt: 1_700_000_000_000,
  attempts: 1,
};
const answer = (requests: unknown[]): string => JSON.stringify({ ok: true, leaseId: 'l1', leaseSeconds: 60, requests });

describe('the pull API wire format', () => {
  it('reads a lease answer: bodies decoded, header names lower-cased', () => {
    const got = parseLeaseAnswer(answer([wire]));
    assert.equal(got.leaseId, 'l1');
    assert.deepEqual(got.requests[0]?.headers, { 'x-github-event': 'push' });
    assert.equal(got.requests[0]?.body.toString(), '{"a":1}');
  });

  const malformed: Array<[string, unknown]> = [
    ['a body that is not base64', { ...wire, body: '***' }],
    ['a url that is not a path', { ...wire, url: 'http://elsewhere/' }],
    ['an unknown authentication', { ...wire, auth: 'trust-me' }],
    ['a header that is not a string', { ...wire, headers: { a: 1 } }],
    ['no id', { ...wire, id: '' }],
  ];
  for (const [name, request] of malformed) {
    it(`refuses a lease answer holding ${name}`, () => {
      assert.throws(() => parseLeaseAnswer(answer([request])), /malformed request \(requests\[0\]\)/);
    });
  }

  it('refuses an answer that is not a lease', () => {
    assert.throws(() => parseLeaseAnswer('<html>'), /not JSON/);
    assert.throws(() => parseLeaseAnswer('{"ok":false}'), /without \{ok, leaseId, requests\}/);
  });

  it("fills a lease ask from the relay's bounds and caps it at them", () => {
    const bounds = { maxWaitSeconds: 30, maxBatch: 100 };
    assert.deepEqual(parseLeaseAsk(Buffer.alloc(0), bounds), { waitSeconds: 30, max: 100 });
    assert.deepEqual(parseLeaseAsk(Buffer.from('{"waitSeconds":120,"max":500}'), bounds), {
      waitSeconds: 30,
      max: 100,
    });
  });

  it("cuts a refusal's reason to its bound", () => {
    const long = 'x'.repeat(MAX_REASON_CHARS + 50);
    const ask = parseAckAsk(
      Buffer.from(JSON.stringify({ refused: [{ id: 'a', status: 400, code: 'c', reason: long }] })),
    );
    assert.equal(ask.refused[0]?.reason.length, MAX_REASON_CHARS);
    assert.deepEqual(ask.ids, []);
  });
});
