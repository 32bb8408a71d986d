import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from './log.js';
import { createThrottledLog } from './create-throttled-log.js';

describe('createThrottledLog', () => {
  it('writes the first occurrence, then one line per interval counting the ones it stood for', () => {
    const lines: Array<Record<string, unknown>> = [];
    let now = 1_000;
    const report = createThrottledLog(
      createLog({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }),
      'error',
      'store unavailable',
      { intervalMs: 10_000, now: () => now },
    );
    report({ code: 'SQLITE_BUSY' });
    for (let i = 0; i < 500; i++) {
      now += 10;
      report({ code: 'SQLITE_BUSY' });
    }
    assert.equal(lines.length, 1);
    now = 1_000 + 10_000;
    report({ code: 'SQLITE_FULL' });
    assert.equal(lines.length, 2);
    assert.deepEqual(
      lines.map((l) => [l['level'], l['msg'], l['code'], l['suppressed']]),
      [
        [50, 'store unavailable', 'SQLITE_BUSY', 0],
        [50, 'store unavailable', 'SQLITE_FULL', 500],
      ],
    );
  });
});
