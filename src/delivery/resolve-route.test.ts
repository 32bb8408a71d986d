import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChannelsConfig } from '../config/index.js';
import type { DeliveryRecord } from '../store/index.js';
import { resolveRoute } from './resolve-route.js';

const delivery = (channel: string, to: string | null): DeliveryRecord =>
  ({ channel, to, resolvedChannel: null, resolvedTo: null }) as unknown as DeliveryRecord;

describe('resolveRoute', () => {
  // Telegram comes first in the spec's order, and has no default recipient.
  const channels = { telegram: { botToken: 't' }, slack: { botToken: 's', defaultTo: 'C42' } } as ChannelsConfig;

  it('sends "last" to the main session\'s last route', () => {
    assert.deepEqual(resolveRoute(delivery('last', null), { channel: 'telegram', to: '7' }, channels), {
      ok: true,
      channel: 'telegram',
      to: '7',
      explicit: false,
    });
  });

  it('with no last route, takes the first configured channel that has a defaultTo', () => {
    assert.deepEqual(resolveRoute(delivery('last', null), null, channels), {
      ok: true,
      channel: 'slack',
      to: 'C42',
      explicit: false,
    });
  });

  it('with no last route and a recipient given, takes the first configured channel', () => {
    assert.deepEqual(resolveRoute(delivery('last', '99'), null, channels), {
      ok: true,
      channel: 'telegram',
      to: '99',
      explicit: false,
    });
  });

  it('with no default recipient anywhere, names the first configured channel in the reason it skips', () => {
    const r = resolveRoute(delivery('last', null), null, {
      telegram: { botToken: 't' },
      discord: { botToken: 'd' },
    } as ChannelsConfig);
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /no recipient on telegram/);
  });

  it('keeps an explicit channel, with its defaultTo or its last recipient', () => {
    assert.deepEqual(resolveRoute(delivery('slack', null), null, channels), {
      ok: true,
      channel: 'slack',
      to: 'C42',
      explicit: true,
    });
    assert.deepEqual(resolveRoute(delivery('slack', null), { channel: 'slack', to: 'C1' }, channels), {
      ok: true,
      channel: 'slack',
      to: 'C1',
      explicit: true,
    });
  });
});
