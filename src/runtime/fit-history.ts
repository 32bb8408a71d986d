import type { ChatMessage } from './providers/model-provider.js';
import type { TranscriptEntry } from '../store/index.js';

/** Transcript entries read back as history for one turn. */
export const HISTORY_ENTRIES = 40;
/** Characters of history a turn sends at most; older entries are dropped first. */
const HISTORY_MAX_CHARS = 64_000;

/**
 * The newest transcript entries that fit in `maxChars`, oldest first, starting with a user
 * message (APIs such as Anthropic's require the conversation to open with the user).
 */
export function fitHistory(entries: readonly TranscriptEntry[], maxChars = HISTORY_MAX_CHARS): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let used = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (used + e.content.length > maxChars) break;
    used += e.content.length;
    kept.push({ role: e.role, content: e.content });
  }
  kept.reverse();
  while (kept.length > 0 && kept[0]!.role !== 'user') kept.shift();
  return kept;
}
