import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MappedHookCall } from './mappings/build-mapped-request.js';
import { resolveIdempotencyKey } from './resolve-idempotency-key.js';

const call = (o: Partial<MappedHookCall>): MappedHookCall => ({
  name: 'github',
  payload: {},
  headers: {},
  url: '/hooks/github',
  ...o,
});

describe('resolveIdempotencyKey', () => {
  const cases: Array<[string, Partial<MappedHookCall>, string | null]> = [
    ['nothing to go by', {}, null],
    ['the client key first', { headers: { 'idempotency-key': ' k1 ' }, deliveryId: 'd', relayId: 'r' }, 'k1'],
    ['the delivery id before the relay id', { deliveryId: 'd-1', relayId: 'r-1' }, 'delivery:d-1'],
    [
      'a Stripe event id before the relay id',
      { payload: { object: 'event', id: 'evt_1' }, relayId: 'r' },
      'stripe:evt_1',
    ],
    ['the relay id of a pulled request with no key of its own', { relayId: 'rel_0192' }, 'relay:rel_0192'],
    ['no relay id when it is empty', { relayId: '' }, null],
  ];
  for (const [name, o, want] of cases) {
    it(`takes ${name}`, () => assert.equal(resolveIdempotencyKey(call(o)), want));
  }
});
