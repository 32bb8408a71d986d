import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkCallbackUrl } from './check-callback-url.js';
import { McpError } from './mcp-error.js';

const strict = { loopback: false, private: false };
const dev = { loopback: true, private: false };

describe('callback URLs at subscribe time', () => {
  it('takes an https URL with a query (the AI SDK routes by one)', () => {
    assert.equal(
      checkCallbackUrl('https://hooks.example.com/mcp?mcp_event_subscription=k', strict).hostname,
      'hooks.example.com',
    );
  });

  it('takes http only to a literal loopback address, and only with loopback callbacks allowed', () => {
    assert.equal(checkCallbackUrl('http://127.0.0.1:9/h', dev).port, '9');
    assert.equal(checkCallbackUrl('http://[::1]:9/h', dev).port, '9');
    for (const [url, allow] of [
      ['http://127.0.0.1:9/h', strict],
      ['http://localhost:9/h', dev],
      ['http://example.com/h', dev],
    ] as const) {
      assert.throws(
        () => checkCallbackUrl(url, allow),
        (e: unknown) => e instanceof McpError && e.code === -32602,
      );
    }
  });

  const refused: Array<[string, unknown, RegExp]> = [
    ['not a string', 42, /non-empty string/],
    ['relative', '/hook', /absolute URL/],
    ['another scheme', 'ftp://example.com/h', /must use https/],
    ['credentials', 'https://a:b@example.com/h', /credentials/],
    ['a fragment', 'https://example.com/h#x', /fragment/],
    ['a private literal', 'https://192.168.0.10/h', /private/],
    ['the metadata address', 'https://169.254.169.254/h', /metadata/],
    ['too long', `https://example.com/${'a'.repeat(3000)}`, /at most/],
  ];
  for (const [what, url, message] of refused) {
    it(`refuses a URL that is ${what}, naming delivery.url`, () => {
      assert.throws(
        () => checkCallbackUrl(url, strict),
        (e: unknown) => e instanceof McpError && /delivery\.url/.test(e.message) && message.test(e.message),
      );
    });
  }
});
