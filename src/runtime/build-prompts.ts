import type { SystemEventRecord } from '../store/index.js';
import { HEARTBEAT_ACK } from './is-heartbeat-ack.js';
import { wrapExternalContent } from './wrap-external-content.js';

/** The heartbeat prompt used when `agents.defaults.heartbeat.prompt` is not set. */
export const DEFAULT_HEARTBEAT_PROMPT =
  "Read the system events above, if any. If something needs the user's attention, reply with a short " +
  `message for them. If nothing needs attention, reply ${HEARTBEAT_ACK} and nothing else.`;

const IDLE_HEADER = 'Heartbeat. No new system events.';

/** Events one heartbeat turn takes at most; the rest wait for the next turn. */
export const HEARTBEAT_MAX_EVENTS = 50;
/** Characters of event text one heartbeat prompt carries at most (at least one event always fits). */
const HEARTBEAT_MAX_EVENT_CHARS = 48_000;
/** Characters of one event's text shown in a heartbeat prompt. */
const EVENT_TEXT_MAX_CHARS = 8_000;

/** The events, oldest first, that one heartbeat prompt takes: bounded in count and size. */
export function takeHeartbeatEvents<T extends { text: string }>(pending: readonly T[]): T[] {
  const taken: T[] = [];
  let used = 0;
  for (const e of pending.slice(0, HEARTBEAT_MAX_EVENTS)) {
    const size = Math.min(e.text.length, EVENT_TEXT_MAX_CHARS);
    if (taken.length > 0 && used + size > HEARTBEAT_MAX_EVENT_CHARS) break;
    taken.push(e);
    used += size;
  }
  return taken;
}

function clipEventText(text: string): string {
  return text.length <= EVENT_TEXT_MAX_CHARS
    ? text
    : `${text.slice(0, EVENT_TEXT_MAX_CHARS)}… [${text.length - EVENT_TEXT_MAX_CHARS} more characters not shown]`;
}

/** True for a heartbeat prompt that lists no events (the echo model acknowledges those). */
export function isIdleHeartbeatPrompt(prompt: string): boolean {
  return prompt.startsWith(IDLE_HEADER);
}

/** Whether content from this source must be wrapped before a model reads it. */
export function needsWrapping(source: { external: boolean; allowUnsafeExternalContent: boolean }): boolean {
  return source.external && !source.allowUnsafeExternalContent;
}

/** One event as a heartbeat lists it: its time, and its text (up to `EVENT_TEXT_MAX_CHARS`), wrapped when it came from a hook. */
export function formatEventLine(e: SystemEventRecord, boundaryId: string): string {
  const shown = clipEventText(e.text);
  const text = needsWrapping(e.source)
    ? `\n${wrapExternalContent(shown, { source: `hook "${e.source.hook}"`, boundaryId, ownFirstLine: e.source.summary === true })}`
    : ` ${shown}`;
  return `- [${new Date(e.createdAt).toISOString()}]${text}`;
}

/**
 * The heartbeat turn's prompt: each pending event with its timestamp (hook-originated text inside
 * the untrusted-content boundary, one boundary id for the turn), then the heartbeat prompt and the
 * current time.
 */
export function buildHeartbeatPrompt(
  events: readonly SystemEventRecord[],
  options: { prompt: string; now: number; boundaryId: string },
): string {
  const parts: string[] = [];
  if (events.length === 0) {
    parts.push(IDLE_HEADER);
  } else {
    parts.push(`Heartbeat. ${events.length} system event${events.length === 1 ? '' : 's'} since the last heartbeat:`);
    for (const e of events) parts.push(formatEventLine(e, options.boundaryId));
  }
  parts.push('', options.prompt, '', `Current time: ${new Date(options.now).toISOString()}`);
  return parts.join('\n');
}

/** The user message of an agent run: the hook's message, wrapped unless the mapping opted out. */
export function buildRunMessage(
  message: string,
  options: {
    hook: string;
    name: string;
    source: { external: boolean; allowUnsafeExternalContent: boolean };
    boundaryId: string;
  },
): string {
  if (!needsWrapping(options.source)) return message;
  return wrapExternalContent(message, {
    source: `hook "${options.name}" (${options.hook})`,
    boundaryId: options.boundaryId,
  });
}

const SUMMARY_CHARS = 500;
/** Blanks and every line terminator (`\s` leaves out U+0085). */
const LINE_BREAKS = /[\s\u0085]+/g;

/** `Hook <name>: <summary>` or `Hook <name> (<status>): <reason>`, one line, bounded. */
export function buildRunSummary(name: string, state: 'succeeded' | 'failed' | 'timed_out', text: string): string {
  // A name is the sender's (`/hooks/agent`'s `name`): on the head's line, never a line of its own.
  name = name.replace(LINE_BREAKS, ' ');
  const flat = text.replace(LINE_BREAKS, ' ').trim();
  const clipped = flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 1)}…` : flat;
  return state === 'succeeded' ? `Hook ${name}: ${clipped}` : `Hook ${name} (${state}): ${clipped}`;
}
