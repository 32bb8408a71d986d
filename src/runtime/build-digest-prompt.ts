import type { PendingDigest, SystemEventRecord } from '../store/index.js';
import { needsWrapping } from './build-prompts.js';
import { wrapExternalContent } from './wrap-external-content.js';

/** Characters of one event shown in a digest; a digest stays well under one turn's budget. */
const DIGEST_EVENT_CHARS = 600;
/** Groups and newest events a digest shows. */
export const DIGEST_GROUPS = 15;
export const DIGEST_NEWEST = 10;

const clip = (text: string): string =>
  text.length <= DIGEST_EVENT_CHARS
    ? text
    : `${text.slice(0, DIGEST_EVENT_CHARS)}… [${text.length - DIGEST_EVENT_CHARS} more characters]`;

function line(e: SystemEventRecord, boundaryId: string, suffix = ''): string {
  const shown = clip(e.text);
  const text = needsWrapping(e.source)
    ? `\n${wrapExternalContent(shown, { source: `hook "${e.source.hook}"`, boundaryId })}`
    : ` ${shown}`;
  return `- [${new Date(e.createdAt).toISOString()}]${suffix}${text}`;
}

/**
 * The prompt of a heartbeat turn over a backlog too large to list: how many events from which
 * hooks, the kinds of event with one sample each and how many more alike, and the newest events.
 * Bounded whatever the backlog's size; the turn consumes the whole backlog.
 */
export function buildDigestPrompt(
  digest: PendingDigest,
  options: { prompt: string; now: number; boundaryId: string },
): string {
  const parts = [
    `Heartbeat. ${digest.total} system events arrived since the last heartbeat, too many to list one by one; here is a digest of all of them.`,
    '',
    `By source: ${digest.byHook.map((h) => `${h.hook} ${h.count}`).join(', ')}.`,
    '',
    'Kinds of event, largest first (one example each):',
  ];
  for (const g of digest.groups) {
    parts.push(line(g.sample, options.boundaryId, g.count > 1 ? ` (and ${g.count - 1} more similar)` : ''));
  }
  const shownKinds = digest.groups.reduce((n, g) => n + g.count, 0);
  if (shownKinds < digest.total) parts.push(`- ${digest.total - shownKinds} more events of other kinds.`);
  parts.push('', 'The newest events:');
  for (const e of digest.newest) parts.push(line(e, options.boundaryId));
  parts.push('', options.prompt, '', `Current time: ${new Date(options.now).toISOString()}`);
  return parts.join('\n');
}
