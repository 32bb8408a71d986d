/** A mapping's `coalesce`: a burst of events about one subject becomes one run that sees them all. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { send, type HttpResult } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig } from '../helpers/temp-config.js';

const j = (r: HttpResult): Record<string, unknown> => (r.json ?? {}) as Record<string, unknown>;

describe('coalesce', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 } } },
        hooks: {
          mappings: [
            {
              id: 'pr',
              match: { path: 'pr' },
              action: 'agent',
              deliver: false,
              messageTemplate: 'PR {{pr}}: {{event}}',
              coalesce: { key: '{{pr}}', windowSeconds: 1 },
            },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  it('gives a burst about one pull request one run, which sees every event', async () => {
    const post = (pr: number, event: string) => send(gw.port, '/hooks/pr', { body: { pr, event } });
    const first = await post(7, 'opened');
    const second = await post(7, 'commented');
    const third = await post(7, 'approved');
    const other = await post(8, 'opened');
    assert.deepEqual([first.status, second.status, third.status], [202, 202, 202]);
    assert.equal(j(second)['runId'], j(first)['runId']);
    assert.equal(j(second)['coalesced'], true);
    assert.equal(j(third)['runId'], j(first)['runId']);
    assert.notEqual(j(other)['runId'], j(first)['runId'], 'another key, another run');
    const id = String(j(first)['runId']);
    let run = await gw.gateway.store.getRun(id);
    for (let i = 0; i < 200 && run?.state !== 'succeeded'; i++) {
      await sleep(25);
      run = await gw.gateway.store.getRun(id);
    }
    assert.equal(run?.state, 'succeeded');
    for (const event of ['opened', 'commented', 'approved']) assert.ok(run!.message.includes(`PR 7: ${event}`), event);
    assert.ok(run!.reply?.includes('approved'), 'the model saw the whole burst');
    assert.equal((await gw.gateway.store.listRuns({ limit: 10 })).length, 2);
  });

  it('answers a repeat of a request that joined a run with that run, as the first time', async () => {
    const post = (event: string, key: string) =>
      send(gw.port, '/hooks/pr', { body: { pr: 9, event }, headers: { 'idempotency-key': key } });
    const first = await post('opened', 'delivery-1');
    const joined = await post('commented', 'delivery-2');
    assert.equal(j(joined)['runId'], j(first)['runId']);
    assert.equal(j(joined)['coalesced'], true);
    const repeat = await post('commented', 'delivery-2');
    assert.equal(repeat.status, 202);
    assert.deepEqual(
      j(repeat),
      { ...j(joined), duplicate: true },
      'the run that answered for it, not one never queued',
    );
    assert.notEqual(await gw.gateway.store.getRun(String(j(repeat)['runId'])), null);
  });
});
