import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventBody, MAX_DELIVERY_BYTES } from './build-deliveries.js';

const event = (data: Record<string, unknown>) => ({
  seq: 42,
  id: '01a2-event',
  name: 'hook.github',
  agentId: 'main',
  requestId: 'r1',
  createdAt: Date.UTC(2030, 0, 1),
  dataJson: JSON.stringify(data),
  untrusted: true,
});

describe('delivery bodies', () => {
  it('sends an occurrence as {eventId, name, timestamp, cursor, data} with data exactly as stored', () => {
    const body = JSON.parse(eventBody(event({ hook: 'github', text: 'PR 7', payload: { a: [1] } })));
    assert.deepEqual(body, {
      eventId: '01a2-event',
      name: 'hook.github',
      timestamp: '2030-01-01T00:00:00.000Z',
      cursor: 'hg1.42',
      data: { hook: 'github', text: 'PR 7', payload: { a: [1] } },
    });
  });

  it('cuts an occurrence past 256 KiB down to its ids and the start of its text, and says so', () => {
    const big = 'x'.repeat(400 * 1024);
    const body = eventBody(event({ hook: 'github', action: 'event', eventId: 'e1', text: big, payload: { big } }));
    assert.ok(Buffer.byteLength(body) <= MAX_DELIVERY_BYTES);
    const { data } = JSON.parse(body) as { data: Record<string, unknown> };
    assert.equal(data['truncated'], true);
    assert.equal(data['eventId'], 'e1');
    assert.equal('payload' in data, false);
    assert.equal((data['text'] as string).length, 16 * 1024);
    assert.ok((data['originalBytes'] as number) > 800 * 1024);
  });
});
