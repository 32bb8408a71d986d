import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TranscriptEntry } from '../store/index.js';
import { fitHistory } from './fit-history.js';

const entry = (role: 'user' | 'assistant', content: string): TranscriptEntry => ({
  sessionKey: 's',
  role,
  content,
  turnId: 't',
  createdAt: 0,
});

describe('fitHistory', () => {
  it('keeps everything that fits, oldest first', () => {
    const h = fitHistory([entry('user', 'a'), entry('assistant', 'b')], 100);
    assert.deepEqual(h, [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
  });
  it('drops the oldest entries past the budget and never opens with the assistant', () => {
    const h = fitHistory(
      [entry('user', 'x'.repeat(50)), entry('assistant', 'y'.repeat(50)), entry('user', 'z'), entry('assistant', 'w')],
      60,
    );
    assert.deepEqual(
      h.map((m) => m.content),
      ['z', 'w'],
    );
  });
  it('returns nothing when even the newest entry is too big', () => {
    assert.deepEqual(fitHistory([entry('user', 'x'.repeat(10))], 5), []);
  });
});
