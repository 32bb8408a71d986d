import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addressGroup, createPeerGrouper } from './create-peer-grouper.js';

describe('addressGroup', () => {
  const cases: Array<[string, string]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:0:1::', '2001:db8:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
  ];
  for (const [address, group] of cases) it(`${address} → ${group}`, () => assert.equal(addressGroup(address), group));

  it('puts every address of one /64 in one group, and the next /64 in another', () => {
    assert.equal(addressGroup('2001:db8:aa:bb::1'), addressGroup('2001:db8:aa:bb:ffff:ffff:ffff:ffff'));
    assert.notEqual(addressGroup('2001:db8:aa:bb::1'), addressGroup('2001:db8:aa:bc::1'));
  });
});

describe('createPeerGrouper', () => {
  const group = createPeerGrouper(['10.0.0.0/8', '2001:db8:ff::1']);

  it('leaves loopback peers uncapped, IPv4, IPv4-mapped and IPv6', () => {
    for (const peer of ['127.0.0.1', '127.1.2.3', '::ffff:127.0.0.1', '::1']) assert.equal(group(peer), null, peer);
  });

  it('leaves trusted proxies uncapped, by range and by address', () => {
    for (const peer of ['10.1.2.3', '::ffff:10.9.9.9', '2001:db8:ff::1']) assert.equal(group(peer), null, peer);
  });

  it("counts everything else by its group, a proxy's neighbour included", () => {
    assert.equal(group('192.0.2.4'), '192.0.2.4');
    assert.equal(group('::ffff:192.0.2.4'), '192.0.2.4');
    assert.equal(group('11.0.0.1'), '11.0.0.1');
    assert.equal(group('2001:db8:ff::2'), '2001:db8:ff:0::/64');
  });

  it('leaves a socket whose peer is gone uncapped', () => {
    assert.equal(group(undefined), null);
  });

  it('with no trusted proxies, caps every peer but loopback', () => {
    const plain = createPeerGrouper([]);
    assert.equal(plain('127.0.0.1'), null);
    assert.equal(plain('10.1.2.3'), '10.1.2.3');
  });
});
