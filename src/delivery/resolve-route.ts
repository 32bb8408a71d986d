import { CHANNEL_NAMES, type ChannelName, type ChannelsConfig } from '../config/index.js';
import type { DeliveryRecord } from '../store/index.js';

/** The main session's last route. */
type LastRoute = { channel: string; to: string } | null;

type Route = { ok: true; channel: ChannelName; to: string; explicit: boolean } | { ok: false; reason: string };

/** Channels configured under `channels`, in the spec's order. */
function configuredChannels(channels: ChannelsConfig): ChannelName[] {
  return CHANNEL_NAMES.filter((name) => channels[name] !== undefined);
}

/**
 * Where a delivery goes. `last`: the main session's last route, else the first configured channel
 * in the spec's order (whatsapp, telegram, discord, slack, mattermost, signal, imessage, msteams)
 * that has a `defaultTo` when the delivery names no `to` (one without could only skip it), else the
 * first configured channel.
 * The recipient: the request's `to`, else the main session's last recipient on that channel, else
 * the channel's `defaultTo`. A route fixed by an earlier attempt is kept.
 */
export function resolveRoute(delivery: DeliveryRecord, lastRoute: LastRoute, channels: ChannelsConfig): Route {
  if (delivery.resolvedChannel !== null && delivery.resolvedTo !== null) {
    return {
      ok: true,
      channel: delivery.resolvedChannel as ChannelName,
      to: delivery.resolvedTo,
      explicit: delivery.channel !== 'last',
    };
  }
  const last = lastRoute?.channel ?? null;
  let channel: ChannelName | undefined;
  if (delivery.channel === 'last') {
    const configured = configuredChannels(channels);
    channel =
      last !== null &&
      (CHANNEL_NAMES as readonly string[]).includes(last) &&
      channels[last as ChannelName] !== undefined
        ? (last as ChannelName)
        : ((delivery.to === null ? configured.find((c) => channels[c]?.defaultTo !== undefined) : undefined) ??
          configured[0]);
    if (channel === undefined)
      return { ok: false, reason: 'no route: the main session has no last route and no channel is configured' };
  } else {
    if (!(CHANNEL_NAMES as readonly string[]).includes(delivery.channel))
      return { ok: false, reason: `unknown channel "${delivery.channel}"` };
    channel = delivery.channel as ChannelName;
    if (channels[channel] === undefined)
      return { ok: false, reason: `channel ${channel} is not configured (channels.${channel})` };
  }
  const lastTo = last === channel ? lastRoute?.to : undefined;
  const to = delivery.to ?? lastTo ?? channels[channel]?.defaultTo ?? null;
  if (to === null)
    return {
      ok: false,
      reason: `no recipient on ${channel}: no "to", no last recipient, no channels.${channel}.defaultTo`,
    };
  return { ok: true, channel, to, explicit: delivery.channel !== 'last' };
}
