import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isHeartbeatAck } from './is-heartbeat-ack.js';
import { parseDurationMs } from '../common/parse-duration.js';

describe('parseDurationMs', () => {
  const cases: Array<[string | number, number | null]> = [
    ['30m', 1_800_000],
    ['1h30m', 5_400_000],
    ['45s', 45_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
    [0, 0],
    ['0', 0],
    [' 10s ', 10_000],
    ['', null],
    ['abc', null],
    ['10', null],
    ['10x', null],
    ['m10', null],
    ['10s junk', null],
    [5, null],
  ];
  for (const [input, want] of cases)
    it(`parses ${JSON.stringify(input)}`, () => assert.equal(parseDurationMs(input), want));
});

describe('isHeartbeatAck', () => {
  const cases: Array<[string, number, boolean]> = [
    ['HEARTBEAT_OK', 0, true],
    ['  **HEARTBEAT_OK**  ', 0, true],
    ['`HEARTBEAT_OK`.', 0, true],
    ['HEARTBEAT_OK - all quiet', 300, true],
    ['HEARTBEAT_OK - all quiet', 3, false],
    ['Alice wrote about lunch; reply?', 300, false],
    ['heartbeat_ok', 300, false],
    [`HEARTBEAT_OK ${'x'.repeat(301)}`, 300, false],
  ];
  for (const [reply, max, want] of cases) {
    it(`${want ? 'treats' : 'does not treat'} ${JSON.stringify(reply.slice(0, 30))} (max ${max}) as an ack`, () => {
      assert.equal(isHeartbeatAck(reply, max), want);
    });
  }
});
