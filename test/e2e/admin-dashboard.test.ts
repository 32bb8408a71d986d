/**
 * The dashboard in a real browser: headless Chromium (the Debian `chromium` package, driven by
 * playwright-core). Where /usr/bin/chromium is missing the suite is skipped and says why.
 * Set HOOKGATE_SCREENSHOTS=<dir> to keep screenshots of each step.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createFakeTelegram, telegramError, type FakeTelegram } from '../fakes/fake-telegram.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, GATEWAY_TOKEN } from '../helpers/temp-config.js';

const CHROMIUM = '/usr/bin/chromium';
const BOT_TOKEN = '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0';
const STEP_MS = 15_000;
const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (install the Debian "chromium" package)`;
if (missing !== null) process.stderr.write(`SKIPPED: admin dashboard in Chromium: ${missing}\n`);

/** Waits (bounded) for the gateway's own state to reach a condition; the page is then checked separately. */
async function until<T>(what: string, probe: () => Promise<T | null | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    await delay(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('admin dashboard in headless Chromium', { skip: missing ?? false }, () => {
  let gw: TestGateway;
  let openai: FakeServer;
  let telegram: FakeTelegram;
  let browser: Browser;
  let page: Page;
  const shots = process.env['HOOKGATE_SCREENSHOTS'];
  const shot = async (name: string): Promise<void> => {
    if (shots === undefined) return;
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  };

  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-the-right-key' });
    telegram = await createFakeTelegram({ botToken: BOT_TOKEN, chatIds: ['42'] });
    gw = await startTestGateway(
      baseConfig({
        gateway: { recordPayloads: true },
        models: { providers: { fake: { api: 'openai', baseUrl: `${openai.url}/v1`, apiKey: 'sk-a-wrong-key' } } },
        channels: { telegram: { botToken: BOT_TOKEN, baseUrl: telegram.url } },
      }),
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(STEP_MS);
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await openai?.close();
    await telegram?.close();
  });

  it('logs in with the gateway token and refuses another', async () => {
    await page.goto(`http://127.0.0.1:${gw.port}/admin`);
    await page.fill('#token', 'not-the-token');
    await page.click('#login-form button');
    await page.locator('#login-error', { hasText: 'refused' }).waitFor();
    await page.fill('#token', GATEWAY_TOKEN);
    await page.click('#login-form button');
    await page.locator('#nav').waitFor({ state: 'visible' });
    assert.equal(await page.evaluate('sessionStorage.getItem("hookgate.adminToken")'), GATEWAY_TOKEN);
  });

  it('shows hook requests as they arrive, with status and reason', async () => {
    assert.equal((await post(gw.port, '/hooks/wake', { text: 'Build 1432 finished' })).status, 200);
    assert.equal((await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: 'a-wrong-token' })).status, 401);
    const accepted = page.locator('tbody tr', { hasText: 'wake' }).filter({ hasText: '200' });
    await accepted.first().waitFor();
    await page.locator('tbody tr', { hasText: 'Missing or invalid hook token.' }).first().waitFor();
    await shot('1-requests');
  });

  it('opens a failed run and shows why it failed', async () => {
    const res = await post(gw.port, '/hooks/agent', {
      message: 'Summarise the alert',
      model: 'fake/gpt-4o-mini',
      deliver: false,
      name: 'Alert',
      wakeMode: 'next-heartbeat',
    });
    const runId = (res.json as { runId: string }).runId;
    await until('the run to fail', async () =>
      (await gw.gateway.store.getRun(runId))?.state === 'failed' ? true : null,
    );
    await page.click('nav a[data-tab="runs"]');
    await page.selectOption('#state-filter', 'failed');
    await page.locator(`tbody tr[data-id="${runId}"]`).click();
    const card = page.locator('#run');
    await card.locator('.badge', { hasText: 'failed' }).waitFor();
    assert.match(await card.innerText(), /401|API key/i);
    await shot('2-failed-run');
  });

  it('retries a failed delivery from the run view and sees it sent', async () => {
    telegram.script.push(telegramError(400, 'Bad Request: chat not found'));
    const res = await post(gw.port, '/hooks/agent', {
      message: 'Tell the on-call',
      channel: 'telegram',
      to: '42',
      name: 'Oncall',
      wakeMode: 'next-heartbeat',
    });
    const runId = (res.json as { runId: string }).runId;
    await until('the delivery to fail', async () => {
      const d = await gw.gateway.store.getRunDelivery(runId);
      return d?.state === 'failed' ? d : null;
    });
    await page.goto(`http://127.0.0.1:${gw.port}/admin#/runs/${runId}`);
    const delivery = page.locator('#delivery');
    await delivery.locator('.badge', { hasText: 'failed' }).waitFor();
    assert.match(await delivery.innerText(), /chat not found/);
    await shot('3-failed-delivery');
    await delivery.locator('button', { hasText: 'Retry delivery' }).click();
    await page.locator('#delivery .badge', { hasText: 'sent' }).waitFor();
    // Summaries wait for the next periodic heartbeat (wakeMode), so the reply is the one message sent.
    const reply = (await gw.gateway.store.getRun(runId))?.reply;
    assert.deepEqual(telegram.messages, [{ to: '42', text: reply }]);
    await shot('4-delivery-sent');
  });

  it('pauses an agent from the dispatch view, shows its run held with the note as text, and resumes it', async () => {
    await page.goto(`http://127.0.0.1:${gw.port}/admin#/dispatch`);
    await page.locator('#dispatch-state', { hasText: 'nothing is held' }).waitFor();
    await page.selectOption('#hold-scope', 'agent');
    await page.selectOption('#hold-key', 'main');
    await page.fill('#hold-note', '<b>deploy</b>');
    await page.locator('button', { hasText: 'Pause' }).click();
    const hold = page.locator('tr[data-hold="agent:main"]');
    await hold.waitFor();
    assert.match(await hold.innerText(), /agent "main"\s+paused.*<b>deploy<\/b>/s);
    assert.equal(await page.locator('#dispatch b').count(), 0, 'the note is text, never markup');
    await shot('5-dispatch-paused');
    const res = await post(gw.port, '/hooks/agent', {
      message: 'Wait for me',
      deliver: false,
      wakeMode: 'next-heartbeat',
    });
    const runId = (res.json as { runId: string }).runId;
    await page.goto(`http://127.0.0.1:${gw.port}/admin#/runs`);
    const row = page.locator(`tbody tr[data-id="${runId}"]`);
    await row.locator('.badge', { hasText: 'held' }).waitFor();
    assert.match(await row.innerText(), /agent "main": paused: <b>deploy<\/b> \(paused\)/);
    await page.goto(`http://127.0.0.1:${gw.port}/admin#/dispatch`);
    await hold.locator('button', { hasText: 'Resume' }).click();
    await page.locator('#dispatch-state', { hasText: 'nothing is held' }).waitFor();
    await until('the run to leave the queue', async () =>
      (await gw.gateway.store.getRun(runId))?.state === 'queued' ? null : true,
    );
  });
});
