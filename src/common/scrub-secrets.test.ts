import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretScrubber, keepText } from './scrub-secrets.js';

const scrub = createSecretScrubber(['hook-token-5f2c9a1e7b3d', 'local-llm-key/with+chars', 'abc']);

describe('createSecretScrubber', () => {
  const removed: Array<[string, string, string]> = [
    [
      'a configured secret by value',
      'upstream said: bad credential hook-token-5f2c9a1e7b3d',
      'hook-token-5f2c9a1e7b3d',
    ],
    [
      'a configured secret percent-encoded in a URL',
      'GET /v1?k=local-llm-key%2Fwith%2Bchars failed',
      'local-llm-key%2Fwith%2Bchars',
    ],
    [
      'an OpenAI key',
      'Incorrect API key provided: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t. You can find your API key at …',
      'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t',
    ],
    ['an Anthropic key', 'invalid x-api-key sk-ant-api03-Zx9_yW8-vU7tS6rQ5pO4', 'sk-ant-api03-Zx9_yW8-vU7tS6rQ5pO4'],
    ['a Slack bot token', 'invalid_auth for xoxb-2048-1024-AbCdEfGhIjKl', 'xoxb-2048-1024-AbCdEfGhIjKl'],
    [
      'a GitHub token',
      'Bad credentials: ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVw',
      'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVw',
    ],
    ['a bearer token', 'request had header Authorization: Bearer eyJraWQiOi.abc.def-ghi', 'eyJraWQiOi.abc.def-ghi'],
    [
      'a Telegram bot token in a Bot API URL',
      'POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage: 401',
      '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
    ],
    ['a Stripe key', 'No such key: sk_live_51Hx0abCDef23GhIJ', 'sk_live_51Hx0abCDef23GhIJ'],
    [
      'a webhook secret',
      'secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw rejected',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    ],
    ['a password in a URL', 'connect https://bb-user:hunter2-longer@imessage.local:1234 refused', 'hunter2-longer'],
    ['a key in a query string', 'GET https://example.test/api?user=1&api_key=Z1x2C3v4B5&x=2 → 403', 'Z1x2C3v4B5'],
    [
      'a JSON Web Token',
      'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ],
    [
      'a Discord bot token',
      'Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs',
      'MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs',
    ],
  ];
  for (const [name, text, secret] of removed) {
    it(`removes ${name}`, () => {
      const out = scrub(text);
      assert.equal(out.includes(secret), false, out);
      assert.match(out, /\[redacted\]/);
    });
  }

  it('keeps the rest of the message readable', () => {
    assert.equal(
      scrub('Incorrect API key provided: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t.'),
      'Incorrect API key provided: sk-[redacted].',
    );
  });

  it('leaves ordinary text alone, and does not scrub very short configured values', () => {
    for (const text of [
      'Bot Framework returned 401 Unauthorized',
      'chat not found (400)',
      'abc def',
      'task-1234 is done',
    ]) {
      assert.equal(scrub(text), text);
    }
  });

  it('removes the longest configured value first', () => {
    const s = createSecretScrubber(['secret-one', 'secret-one-and-more']);
    assert.equal(s('x secret-one-and-more y'), 'x [redacted] y');
  });

  it('keepText changes nothing', () =>
    assert.equal(keepText('sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t'), 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t'));
});
