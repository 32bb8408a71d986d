import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, formatBudgets, formatBytes } from './status-command.js';

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
});
