import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, formatBudgets, formatBytes, formatCatchUps, formatHolds } from './status-command.js';

describe('status formatting', () => {
  const bytes: Array<[number, string]> = [
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [5 * 1024 ** 2, '5.0 MiB'],
    [3 * 1024 ** 3, '3.0 GiB'],
  ];
  for (const [n, text] of bytes) it(`formats ${n} bytes as ${text}`, () => assert.equal(formatBytes(n), text));

  const ages: Array<[number, string]> = [
    [-5, '0s'],
    [999, '0s'],
    [9_000, '9s'],
    [252_000, '4m 12s'],
    [7_380_000, '2h 03m'],
    [2 * 86_400_000 + 3_600_000, '2d 01h'],
  ];
  for (const [ms, text] of ages) it(`formats an age of ${ms} ms as ${text}`, () => assert.equal(formatAge(ms), text));

  it('formats each budgeted key with the limits it has beside what it used', () => {
    const lines = formatBudgets(
      {
        agents: { main: { tokensPerDay: 2_000_000 } },
        hooks: { github: { runsPerHour: 20, maxConcurrentRuns: 1 }, idle: { runsPerHour: 5 } },
      },
      {
        agents: { main: { started: 9, tokens: 1_234_567, running: 0 } },
        hooks: { github: { started: 20, tokens: 0, running: 1 } },
      },
    );
    assert.deepEqual(lines, [
      '  agent "main"       tokens in 24 h 1,234,567 / 2,000,000',
      '  mapping "github"   runs this hour 20 / 20, running 1 / 1',
      '  mapping "idle"     runs this hour 0 / 5',
    ]);
  });

  it('formats each dispatch hold with its age and note, or says dispatch runs', () => {
    const now = Date.parse('2026-05-01T10:00:00Z');
    assert.deepEqual(formatHolds([], now), ['Dispatch: running (no hold)']);
    assert.deepEqual(
      formatHolds(
        [
          { scope: 'all', key: '*', kind: 'drain', note: null, at: now - 90_000 },
          { scope: 'mapping', key: 'github', kind: 'pause', note: 'key rotation', at: now - 5000 },
        ],
        now,
      ),
      [
        'Dispatch held (requests are still accepted):',
        '  all dispatch       drained 1m 30s ago (since 2026-05-01T09:58:30.000Z)',
        '  mapping "github"   paused 5s ago (since 2026-05-01T09:59:55.000Z): key rotation',
      ],
    );
  });

  it('formats each catch-up position, one that no pass finished included', () => {
    const now = Date.parse('2026-05-01T10:00:00Z');
    assert.deepEqual(
      formatCatchUps(
        [
          { mappingId: 'github', cursorAt: now - 120_000, lastId: 'g-1', resumeAfter: null, updatedAt: now },
          { mappingId: 'stripe', cursorAt: null, lastId: null, resumeAfter: null, updatedAt: null },
        ],
        now,
      ),
      [
        'Catch-up (handled up to):',
        '  mapping "github"   2026-05-01T09:58:00.000Z (2m 00s ago), last event g-1',
        '  mapping "stripe"   no pass has finished yet',
      ],
    );
  });
});
