/**
 * The dashboard's relay view in headless Chromium (skipped, saying why, without /usr/bin/chromium):
 * a relay's backlog, the oldest request's age, and a dead letter whose reason is markup, shown as
 * text; requeue from the page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, GATEWAY_TOKEN, HOOK_TOKEN } from '../helpers/temp-config.js';

const CHROMIUM = '/usr/bin/chromium';
const RELAY_TOKEN = 'test-relay-token-dashboard-7c1f';
const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (install the Debian "chromium" package)`;
if (missing !== null) process.stderr.write(`SKIPPED: relay dashboard in Chromium: ${missing}\n`);

const MARKUP = '<img src=x onerror="document.title=\'owned\'"><b>bold</b>';

describe('relay view in headless Chromium', { skip: missing ?? false }, () => {
  let relay: TestGateway;
  let browser: Browser;
  let page: Page;

  before(async () => {
    relay = await startTestGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: [{ id: 'plain', match: { path: 'plain' }, action: 'wake' }],
        },
        relay: { enabled: true, token: RELAY_TOKEN },
      }),
    );
    for (const n of [1, 2]) await send(relay.port, '/hooks/plain', { body: { n } });
    const leased = await send(relay.port, '/relay/lease', { body: { waitSeconds: 0, max: 1 }, auth: RELAY_TOKEN });
    const [first] = (leased.json as { requests: Array<{ id: string }> }).requests;
    const refused = [{ id: first!.id, status: 400, code: 'invalid_payload', reason: MARKUP }];
    const acked = await send(relay.port, '/relay/ack', { body: { refused }, auth: RELAY_TOKEN });
    assert.equal(acked.status, 200, acked.text);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(15_000);
  });
  after(async () => {
    await browser?.close();
    await relay?.stop();
  });

  it("shows the backlog and a dead letter's reason as text, and requeues it", async () => {
    await page.goto(`http://127.0.0.1:${relay.port}/admin#/relay`);
    await page.fill('#token', GATEWAY_TOKEN);
    await page.click('#login-form button');
    await page.locator('#relay-backlog').waitFor();
    const backlog = await page.locator('#relay-backlog').innerText();
    assert.match(backlog, /waiting for the home\s+1/);
    assert.match(backlog, /dead letters\s+1/);
    assert.match(backlog, /s ago/);
    const dead = page.locator('#relay-dead tr[data-id]');
    assert.equal(await dead.count(), 1);
    assert.match(await dead.innerText(), /invalid_payload/);
    assert.ok((await dead.innerText()).includes(MARKUP), 'the reason is shown as it was given');
    assert.equal(await page.locator('#relay-dead b').count(), 0, 'never parsed as markup');
    assert.equal(await page.locator('#relay-dead img').count(), 0);
    assert.notEqual(await page.title(), 'owned');
    await dead.locator('button', { hasText: 'Requeue' }).click();
    await page.locator('#relay-dead-none').waitFor();
    assert.match(await page.locator('#relay-backlog').innerText(), /waiting for the home\s+2/);
  });
});
