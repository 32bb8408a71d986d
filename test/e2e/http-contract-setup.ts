/**
 * Shared by the HTTP contract end-to-end tests (`http-contract-*.test.ts`, DESIGN §3): the config
 * of the shared gateway and store look-ups for what a request left behind.
 */
import assert from 'node:assert/strict';
import { post, send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

export const HOOK_UUID_KEY = /^hook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Agents used by every policy config: `main` (default) and `ops`. */
export const AGENTS = { list: [{ id: 'main', default: true }, { id: 'ops' }] };

/** The shared gateway: lockout effectively off so 401 tests cannot lock 127.0.0.1 out. */
export const MAIN_CONFIG = baseConfig({
  hooks: {
    enabled: true,
    token: HOOK_TOKEN,
    // As generous as the config allows (10 tries a second).
    authRateLimit: { maxFailures: 6000, windowSeconds: 600, lockoutSeconds: 600 },
  },
  agents: {
    ...AGENTS,
    defaults: { model: 'small', models: { 'echo/small': { alias: 'small' }, 'echo/big': {} } },
  },
});

/** Starts a gateway for one test and always stops it. */
export async function withGateway(config: ConfigDoc, fn: (gw: TestGateway) => Promise<void>): Promise<void> {
  const gw = await startTestGateway(config);
  try {
    await fn(gw);
  } finally {
    await gw.stop();
  }
}

export async function findEvent(gw: TestGateway, id: string) {
  return (await gw.gateway.store.listSystemEvents({ limit: 10_000 })).find((e) => e.id === id);
}

export async function findRun(gw: TestGateway, id: string) {
  return (await gw.gateway.store.listRuns({ limit: 10_000 })).find((r) => r.id === id);
}

/**
 * States a run may be in right after its 202: recorded `queued`, and the runtime may already
 * have claimed (and, with the offline echo model, finished) it before the test reads the store.
 */
export const ACCEPTED_STATES = ['queued', 'running', 'succeeded'];

/** Posts an agent payload and returns the stored run (asserting the 202). */
export async function acceptedRun(gw: TestGateway, payload: unknown) {
  const res = await post(gw.port, '/hooks/agent', payload);
  assert.equal(res.status, 202, res.text);
  const body = res.json as { ok: boolean; runId: string };
  const run = await findRun(gw, body.runId);
  assert.ok(run, `run ${body.runId} is stored`);
  assert.ok(ACCEPTED_STATES.includes(run.state), `state ${run.state}${run.error === null ? '' : `: ${run.error}`}`);
  return run;
}

export async function assertHealthy(port: number): Promise<void> {
  const res = await send(port, '/healthz', { method: 'GET', auth: false });
  assert.equal(res.status, 200, 'the server is still up');
}
