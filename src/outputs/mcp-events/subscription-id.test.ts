import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor } from './cursor.js';
import { decodeWebhookSecret } from './sign-webhook.js';
import { subscriptionId } from './subscription-id.js';

describe('subscription ids, cursors and secrets', () => {
  it('derives the same id from the same key whatever the order of the arguments, and another from any change', () => {
    const url = 'https://a.example/h';
    const id = subscriptionId(url, 'hook.wake', { agentId: 'main', x: 1 });
    assert.match(id, /^sub_[0-9a-f]{32}$/);
    assert.equal(subscriptionId(url, 'hook.wake', { x: 1, agentId: 'main' }), id);
    assert.notEqual(subscriptionId(url, 'hook.agent', { agentId: 'main', x: 1 }), id);
    assert.notEqual(subscriptionId(`${url}?k=2`, 'hook.wake', { agentId: 'main', x: 1 }), id);
    assert.notEqual(subscriptionId(url, 'hook.wake', { agentId: 'ops', x: 1 }), id);
  });

  it('reads back the position a cursor names, and nothing from a cursor it did not issue', () => {
    assert.equal(decodeCursor(encodeCursor(0)), 0);
    assert.equal(decodeCursor(encodeCursor(123_456)), 123_456);
    for (const bad of ['', '123', 'hg1.', 'hg1.-1', 'hg1.01', 'hg2.5', 'hg1.99999999999999999']) {
      assert.equal(decodeCursor(bad), null, bad);
    }
  });

  it('takes a whsec_ secret of 24 to 64 bytes, and no other', () => {
    const of = (n: number) => `whsec_${Buffer.alloc(n, 3).toString('base64')}`;
    assert.equal(decodeWebhookSecret(of(24))?.length, 24);
    assert.equal(decodeWebhookSecret(of(64))?.length, 64);
    for (const bad of [of(23), of(65), 'hunter2', `whsec_${'*'.repeat(40)}`, Buffer.alloc(32).toString('base64')]) {
      assert.equal(decodeWebhookSecret(bad), null, bad);
    }
  });
});
