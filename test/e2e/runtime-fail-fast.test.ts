import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import type { RunRecord } from '../../src/store/index.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createTempDir, HOOK_TOKEN } from '../helpers/temp-config.js';

/** A port that was just free: nothing listens there, so connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('runtime: a model that cannot be reached fails the run in seconds, not after timeoutSeconds', () => {
  let gateway: Gateway;
  let fake: FakeServer;
  let dir: string;
  before(async () => {
    fake = await createFakeOpenAi({ apiKey: 'sk-right' });
    dir = createTempDir('hookgate-fail-fast-');
    writeFileSync(
      join(dir, 'hookgate.json'),
      JSON.stringify({
        gateway: { logLevel: 'silent' },
        hooks: { enabled: true, token: HOOK_TOKEN },
        models: {
          providers: {
            refused: { api: 'openai', baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, apiKey: 'sk-right' },
            nowhere: { api: 'anthropic', baseUrl: 'https://api.hookgate-test.invalid', apiKey: 'ak' },
            wrongkey: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-wrong' },
          },
        },
        // The default ten-minute run timeout: a run that waited for it would time this test out.
        agents: {
          defaults: { model: 'wrongkey/gpt-test', timeoutSeconds: 600, heartbeat: { every: 0 } },
          list: [{ id: 'main' }],
        },
      }),
    );
    gateway = await startGateway(readConfig(join(dir, 'hookgate.json'), {}), {
      port: 0,
      log: createLog({ level: 'silent' }),
      delivery: { deliver: () => {} },
      runtime: { pollMs: 50 },
    });
  });
  after(async () => {
    await gateway.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function runWith(model: string): Promise<RunRecord> {
    const res = await fetch(`http://127.0.0.1:${gateway.port}/hooks/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HOOK_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        message: 'Summarise the overnight alerts',
        model,
        wakeMode: 'next-heartbeat',
        deliver: false,
      }),
    });
    assert.equal(res.status, 202);
    const { runId } = (await res.json()) as { runId: string };
    const until = Date.now() + 15_000;
    for (;;) {
      const run = await gateway.store.getRun(runId);
      if (run !== null && run.state !== 'queued' && run.state !== 'running') return run;
      assert.ok(Date.now() < until, `run still ${run?.state} after 15 s`);
      await sleep(25);
    }
  }

  it('fails a run whose model base URL refuses connections, naming the reason', async () => {
    const run = await runWith('refused/gpt-test');
    assert.equal(run.state, 'failed');
    assert.match(run.error ?? '', /connection refused.*ECONNREFUSED.*gave up after 3 attempts/);
  });

  it('fails a run whose model host does not resolve', async () => {
    const run = await runWith('nowhere/claude-test');
    assert.equal(run.state, 'failed');
    assert.match(run.error ?? '', /host name does not resolve.*hookgate-test\.invalid/);
  });

  it('fails a run at once when the provider refuses the key (401)', async () => {
    const before = fake.requests.length;
    const run = await runWith('wrongkey/gpt-test');
    assert.equal(run.state, 'failed');
    assert.match(run.error ?? '', /openai 401: Incorrect API key provided/);
    assert.equal(fake.requests.length - before, 1);
  });
});
