/**
 * Operators and MCP Events subscriptions: the CLI (`hookgate subscriptions`, `... remove ID`), the
 * admin API and the dashboard's Subscriptions tab (in headless Chromium, where it is installed) list
 * them without their secrets and remove them, and the subscriber is told.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { runCli } from '../../src/cli/index.js';
import { openStore, startGateway, type Gateway } from '../../src/main.js';
import { send } from '../helpers/http-client.js';
import { connectMcpClient, startMcpSubscriber, type McpSubscriber } from '../helpers/mcp-subscriber.js';
import { baseConfig, createTempConfig, GATEWAY_TOKEN, type TempConfig } from '../helpers/temp-config.js';

const MCP_TOKEN = 'test-mcp-token-8d2e6c1b';
const CHROMIUM = '/usr/bin/chromium';

describe('MCP Events subscriptions for operators', () => {
  let temp: TempConfig;
  let gateway: Gateway;
  let sub: McpSubscriber;
  const secrets: string[] = [];
  const ids: string[] = [];
  const cli = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--config', temp.path], {
      env: {},
      stdout: (s) => {
        stdout += s;
      },
      stderr: (s) => {
        stderr += s;
      },
      startGateway,
      openStore,
    });
    return { code, stdout, stderr };
  };
  before(async () => {
    temp = createTempConfig(baseConfig({ mcp: { enabled: true, token: MCP_TOKEN, allowLoopbackCallbacks: true } }));
    gateway = await startGateway(readConfig(temp.path, {}), {
      port: 0,
      log: createLog({ level: 'silent' }),
      mcp: { send: { idleMs: 100 } },
    });
    sub = await startMcpSubscriber();
    const client = await connectMcpClient(`http://127.0.0.1:${gateway.port}/mcp`, MCP_TOKEN, sub.store);
    for (const [name, args] of [
      ['hook.wake', {}],
      ['hook.agent', { agentId: 'main' }],
      ['run.finished', { agentId: '<b>bold</b>' }],
    ] as const) {
      const r = await client.experimental_events.subscribe({
        name,
        arguments: args,
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      ids.push(r.id);
    }
    await client.close();
    secrets.push(...sub.store.all().map((s) => s.delivery.secret));
    assert.equal(secrets.length, 3);
  });
  after(async () => {
    await gateway.close();
    await sub.close();
    temp.cleanup();
  });

  it('lists subscriptions in the CLI, as text and JSON, without their secrets', async () => {
    const text = await cli('subscriptions');
    assert.equal(text.code, 0, text.stderr);
    for (const id of ids) assert.ok(text.stdout.includes(id));
    assert.match(text.stdout, /hook\.agent\s+\{"agentId":"main"\}/);
    const json = await cli('subscriptions', '--json');
    const list = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(
      list.map((s) => s['id']),
      ids,
    );
    assert.equal(list[0]!['state'], 'active');
    for (const s of secrets) {
      assert.ok(!text.stdout.includes(s) && !json.stdout.includes(s), 'no secret in the listing');
      assert.ok(!s.includes('secret'));
    }
    assert.ok(list.every((s) => !('secret' in s)));
  });

  it('lists subscriptions in the admin API without their secrets', async () => {
    const res = await send(gateway.port, '/admin/api/subscriptions', { method: 'GET', auth: GATEWAY_TOKEN });
    assert.equal(res.status, 200);
    const { subscriptions } = res.json as { subscriptions: Array<Record<string, unknown>> };
    assert.equal(subscriptions.length, 3);
    for (const s of secrets) assert.ok(!res.text.includes(s));
    assert.ok(subscriptions.every((s) => !('secret' in s)));
  });

  it('removes a subscription from the CLI and its subscriber is told (terminated, removed)', async () => {
    const r = await cli('subscriptions', 'remove', ids[0]!);
    assert.equal(r.code, 0, r.stderr);
    await sub.waitFor(() => sub.terminations.some((t) => t.subscriptionId === ids[0]));
    assert.equal(sub.terminations.find((t) => t.subscriptionId === ids[0])!.reason, 'removed');
    const again = await cli('subscriptions', 'remove', 'sub_nope');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no subscription "sub_nope"/);
  });

  it('removes a subscription from the admin API', async () => {
    const res = await send(gateway.port, `/admin/api/subscriptions/${ids[1]}/remove`, {
      method: 'POST',
      auth: GATEWAY_TOKEN,
    });
    assert.equal(res.status, 200);
    await sub.waitFor(() => sub.terminations.some((t) => t.subscriptionId === ids[1]));
    const missing = await send(gateway.port, '/admin/api/subscriptions/sub_nope/remove', {
      method: 'POST',
      auth: GATEWAY_TOKEN,
    });
    assert.equal(missing.status, 404);
  });

  it('shows the Subscriptions tab in the dashboard, arguments as text, and removes from it', {
    skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing`,
  }, async () => {
    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${gateway.port}/admin/`);
      await page.fill('#token', GATEWAY_TOKEN);
      await page.press('#token', 'Enter');
      await page.waitForSelector('nav:not([hidden])');
      await page.click('a[data-tab="subscriptions"]');
      const row = page.locator(`tr[id="${ids[2]}"]`);
      await row.waitFor();
      const text = await row.innerText();
      assert.ok(text.includes('run.finished'));
      assert.ok(text.includes('<b>bold</b>'), 'markup in an argument is shown as text');
      assert.equal(await page.locator('tr b').count(), 0, 'and never parsed');
      for (const s of secrets) assert.ok(!(await page.content()).includes(s));
      await row.locator('button', { hasText: 'Remove' }).click();
      await sub.waitFor(() => sub.terminations.some((t) => t.subscriptionId === ids[2]));
    } finally {
      await browser.close();
    }
  });
});
