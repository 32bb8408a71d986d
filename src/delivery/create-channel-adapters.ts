import type { ChannelsConfig } from '../config/index.js';
import type { ChannelAdapter } from './channel-adapter.js';
import { createDiscordChannel } from './channels/discord.js';
import { createIMessageChannel } from './channels/imessage.js';
import { createMattermostChannel } from './channels/mattermost.js';
import { createMsTeamsChannel } from './channels/msteams.js';
import { createSignalChannel } from './channels/signal.js';
import { createSlackChannel } from './channels/slack.js';
import { createTelegramChannel } from './channels/telegram.js';
import { createWhatsAppChannel } from './channels/whatsapp.js';

/** One adapter per channel configured under `channels`. */
export function createChannelAdapters(
  channels: ChannelsConfig,
  deps: { now: () => number },
): Map<string, ChannelAdapter> {
  const adapters = new Map<string, ChannelAdapter>();
  const add = (adapter: ChannelAdapter): void => {
    adapters.set(adapter.name, adapter);
  };
  if (channels.whatsapp !== undefined) add(createWhatsAppChannel(channels.whatsapp));
  if (channels.telegram !== undefined) add(createTelegramChannel(channels.telegram));
  if (channels.discord !== undefined) add(createDiscordChannel(channels.discord));
  if (channels.slack !== undefined) add(createSlackChannel(channels.slack));
  if (channels.mattermost !== undefined) add(createMattermostChannel(channels.mattermost));
  if (channels.signal !== undefined) add(createSignalChannel(channels.signal));
  if (channels.imessage !== undefined) add(createIMessageChannel(channels.imessage));
  if (channels.msteams !== undefined) add(createMsTeamsChannel(channels.msteams, deps));
  return adapters;
}
