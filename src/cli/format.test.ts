import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOutput } from './format.js';

describe('jsonOutput', () => {
  it('follows each epoch-millisecond time field with its ISO form, at any depth', () => {
    const at = Date.UTC(2026, 11, 2, 10, 30);
    const parsed = JSON.parse(
      jsonOutput({ at, runs: [{ id: 'r1', createdAt: at, finishedAt: null, attempts: 3 }], retryAfterMs: 5000 }),
    );
    assert.deepEqual(parsed, {
      at,
      atIso: '2026-12-02T10:30:00.000Z',
      runs: [{ id: 'r1', createdAt: at, createdAtIso: '2026-12-02T10:30:00.000Z', finishedAt: null, attempts: 3 }],
      retryAfterMs: 5000,
    });
  });

  it('leaves numbers that are not times alone, whatever their name', () => {
    const parsed = JSON.parse(jsonOutput({ repeatAt: 3, tokens: 1_700_000_000_000, seenAt: '2026-12-02' }));
    assert.deepEqual(parsed, { repeatAt: 3, tokens: 1_700_000_000_000, seenAt: '2026-12-02' });
  });
});
