import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectionShare } from './connection-share.js';

describe('connectionShare', () => {
  const cases: Array<[string, Parameters<typeof connectionShare>[0], number]> = [
    ['half of an empty gateway for a first client', { held: 0, open: 0, maxConnections: 1000 }, 500],
    ['half of what the others leave', { held: 0, open: 500, maxConnections: 1000 }, 250],
    ['counts what the client holds as its own', { held: 250, open: 750, maxConnections: 1000 }, 250],
    ['rounds up', { held: 0, open: 999, maxConnections: 1000 }, 1],
    ['at least one, even when the gateway is full', { held: 0, open: 1000, maxConnections: 1000 }, 1],
    ['capped by maxConnectionsPerClient', { held: 0, open: 0, maxConnections: 1000, maxPerClient: 7 }, 7],
    ['the smaller of the cap and the share', { held: 0, open: 990, maxConnections: 1000, maxPerClient: 7 }, 5],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(connectionShare(input), want));

  it('leaves room after four clients each take all they may', () => {
    let open = 0;
    for (let client = 0; client < 4; client++) {
      let held = 0;
      while (held < connectionShare({ held, open, maxConnections: 1000 })) {
        held++;
        open++;
      }
    }
    assert.equal(open, 938, 'a fixed quarter each let four clients take all 1,000');
  });
});
