import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClientAddressResolver, foldAddress } from './resolve-client-address.js';

describe('foldAddress', () => {
  it('folds IPv4-mapped IPv6', () => assert.equal(foldAddress('::ffff:10.1.2.3'), '10.1.2.3'));
  it('keeps plain IPv6', () => assert.equal(foldAddress('::1'), '::1'));
});

describe('createClientAddressResolver', () => {
  it('ignores X-Forwarded-For without trusted proxies', () => {
    assert.equal(createClientAddressResolver([])('::ffff:127.0.0.1', '1.2.3.4'), '127.0.0.1');
  });
  const resolve = createClientAddressResolver(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
  const cases: Array<[string, string, string | undefined, string]> = [
    ['believes a trusted peer', '127.0.0.1', '203.0.113.9', '203.0.113.9'],
    ['takes the right-most untrusted hop', '127.0.0.1', '198.51.100.1, 203.0.113.9, 10.0.0.5', '203.0.113.9'],
    ['does not believe an untrusted peer', '192.0.2.1', '203.0.113.9', '192.0.2.1'],
    ['uses the peer when there is no header', '::ffff:127.0.0.1', undefined, '127.0.0.1'],
    ['uses the left-most hop when all are trusted', '127.0.0.1', '10.0.0.1, 10.0.0.2', '10.0.0.1'],
    ['does not believe a garbled hop', '127.0.0.1', 'not-an-ip', '127.0.0.1'],
    ['matches IPv6 ranges', 'fd00::1', '2001:db8::7', '2001:db8::7'],
  ];
  for (const [name, socket, xff, want] of cases) it(name, () => assert.equal(resolve(socket, xff), want));
});
