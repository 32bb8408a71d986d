import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAddress, refusedClass } from './address-policy.js';

describe('callback address policy', () => {
  const cases: Array<[string, string | null]> = [
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.3.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.10.10', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['93.184.216.34', null],
    ['2606:4700:4700::1111', null],
  ];
  for (const [address, cls] of cases) {
    it(`classifies ${address} as ${cls ?? 'routable'}`, () => assert.equal(classifyAddress(address), cls));
  }

  it('lets loopback through only when loopback callbacks are allowed, and private ones only when private are', () => {
    assert.equal(refusedClass('127.0.0.1', { loopback: true, private: false }), null);
    assert.equal(refusedClass('127.0.0.1', { loopback: false, private: true }), 'loopback');
    assert.equal(refusedClass('10.0.0.1', { loopback: true, private: false }), 'private');
    assert.equal(refusedClass('10.0.0.1', { loopback: false, private: true }), null);
  });

  it('never lets a metadata or link-local address through', () => {
    const all = { loopback: true, private: true };
    assert.equal(refusedClass('169.254.169.254', all), 'metadata');
    assert.equal(refusedClass('fd00:ec2::254', all), 'metadata');
    assert.equal(refusedClass('169.254.1.1', all), 'link-local');
  });
});
