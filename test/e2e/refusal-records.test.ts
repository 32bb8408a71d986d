/**
 * A flood of refusals against the real gateway: the request log keeps a burst of their records and
 * then a steady rate (REFUSALS_PER_SECOND), counts the rest in the metrics, and still records every
 * accepted request.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { REFUSAL_BURST, REFUSALS_PER_SECOND } from '../../src/admin/create-request-recorder.js';
import { post, send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { baseConfig, GATEWAY_TOKEN } from '../helpers/temp-config.js';

const FLOOD = 2000;

describe('request records under a flood of refusals', () => {
  let gw: TestGateway;
  before(async () => {
    // A lockout this generous never starts here: every refusal is a 401.
    gw = await startTestGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: 'right-token-0123',
          authRateLimit: { maxFailures: 6000, windowSeconds: 600, lockoutSeconds: 600 },
        },
      }),
    );
  });
  after(() => gw.stop());

  it("keeps a burst and a rate of the refusals' records, counts the others, and records the accepted request", async () => {
    const started = Date.now();
    for (let i = 0; i < FLOOD; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(gw.port, '/hooks/wake', { text: 'x' }, { auth: 'wrong-token' })),
      );
      for (const a of answers) assert.equal(a.status, 401);
    }
    const seconds = (Date.now() - started) / 1000;
    assert.equal((await post(gw.port, '/hooks/wake', { text: 'accepted' }, { auth: 'right-token-0123' })).status, 200);
    let dropped = 0;
    for (let i = 0; i < 100; i++) {
      const metrics = parseMetrics((await send(gw.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text);
      dropped = metricValue(metrics, 'hookgate_request_records_dropped_total') ?? 0;
      const kept = (await gw.gateway.store.listRequests({ status: 401, limit: FLOOD })).length;
      if (kept + dropped === FLOOD) break;
      await delay(20);
    }
    const kept = (await gw.gateway.store.listRequests({ status: 401, limit: FLOOD })).length;
    assert.equal(kept + dropped, FLOOD, 'every refusal is either recorded or counted');
    assert.ok(
      kept >= REFUSAL_BURST && kept <= REFUSAL_BURST + Math.ceil(seconds * REFUSALS_PER_SECOND) + 1,
      `${kept} records kept in ${seconds.toFixed(1)} s`,
    );
    assert.equal((await gw.gateway.store.listRequests({ status: 200 })).length, 1);
  });
});
