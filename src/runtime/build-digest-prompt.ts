import type { PendingDigest, SystemEventRecord } from '../store/index.js';
import { formatEventLine, needsWrapping } from './build-prompts.js';
import { wrapExternalContent } from './wrap-external-content.js';

/** Characters of one event shown in a digest; a digest stays well under one turn's budget. */
const DIGEST_EVENT_CHARS = 600;
/** What one digest shows: kinds at least, hooks each with a kind of its own, newest events, high-priority events. */
export const DIGEST_GROUPS = 15;
export const DIGEST_HOOKS = 50;
export const DIGEST_NEWEST = 10;
export const DIGEST_HIGH = 20;

const clip = (text: string): string =>
  text.length <= DIGEST_EVENT_CHARS
    ? text
    : `${text.slice(0, DIGEST_EVENT_CHARS)}… [${text.length - DIGEST_EVENT_CHARS} more characters]`;

function line(e: SystemEventRecord, boundaryId: string, suffix = ''): string {
  const shown = clip(e.text);
  const text = needsWrapping(e.source)
    ? `\n${wrapExternalContent(shown, { source: `hook "${e.source.hook}"`, boundaryId, ownFirstLine: e.source.summary === true })}`
    : ` ${shown}`;
  return `- [${new Date(e.createdAt).toISOString()}]${suffix}${text}`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * The prompt of a heartbeat turn over a backlog too large to list: how many events from which
 * hooks, the high-priority events in full, the kinds of event rarest first (one sample each and how
 * many more alike), what waits for the next heartbeat, and the newest events. Bounded whatever the
 * backlog's size. `high` are the high-priority events the turn lists (those that fit).
 */
export function buildDigestPrompt(
  digest: PendingDigest,
  high: readonly SystemEventRecord[],
  options: { prompt: string; now: number; boundaryId: string },
): string {
  const parts = [
    `Heartbeat. ${digest.total} system events arrived since the last heartbeat, too many to list one by one; here is a digest.`,
    '',
    `By source: ${digest.byHook.map((h) => `${h.hook} ${h.count}`).join(', ')}.`,
  ];
  if (high.length > 0) {
    parts.push('', 'High priority, in full (oldest first):');
    for (const e of high) parts.push(formatEventLine(e, options.boundaryId));
  }
  // Rarest first: what stands out of a flood is what happened once.
  const kinds = [...digest.groups].sort((a, b) => a.count - b.count);
  parts.push('', 'Kinds of event, rarest first (one example each):');
  for (const g of kinds) {
    parts.push(line(g.sample, options.boundaryId, g.count > 1 ? ` (and ${g.count - 1} more similar)` : ''));
  }
  const keptKinds = digest.kinds - digest.groups.length;
  const keptHigh = digest.highTotal - high.length;
  if (keptKinds > 0 || keptHigh > 0) {
    const kept = [
      ...(keptKinds > 0 ? [`events of ${plural(keptKinds, 'other kind')}`] : []),
      ...(keptHigh > 0 ? [plural(keptHigh, 'more high-priority event')] : []),
    ];
    parts.push(`- Not in this digest, and kept for the next heartbeat: ${kept.join(' and ')}.`);
  }
  parts.push('', 'The newest events:');
  for (const e of digest.newest) parts.push(line(e, options.boundaryId));
  parts.push('', options.prompt, '', `Current time: ${new Date(options.now).toISOString()}`);
  return parts.join('\n');
}
