import type { EventAction } from '../policy/index.js';
import type { NewLogEvent, NewRun, NewSystemEvent } from '../store/index.js';

/** What a hook request turned into, once durably recorded. */
export type HookOutcome =
  | { kind: 'wake'; event: NewSystemEvent }
  /**
   * `wait`: the caller asked to wait for the run's end, for at most `timeoutMs`. `coalesced`: the
   * message joined an earlier queued run (whose id `run.id` now is) instead of starting one.
   */
  | { kind: 'agent'; run: NewRun; wait?: { timeoutMs: number; returnReply: boolean }; coalesced?: true }
  /** An `event` mapping's call: recorded and published only (MCP Events); `published` once publishing is on. */
  | { kind: 'event'; action: EventAction; published?: NewLogEvent }
  /** Nothing recorded as an action: 204, or 200 for a mapping whose action is `ignore`. */
  | { kind: 'skip'; ignored?: true }
  /** A `forEach` mapping's actions, one per item; `duplicate` marks an item seen in an earlier request. */
  | { kind: 'many'; items: ItemOutcome[] }
  /** A repeat of a request already accepted within its idempotency window: its first answer, nothing new recorded. */
  | { kind: 'duplicate'; status: number; body: string };

/** One item of a `forEach` request. */
export interface ItemOutcome {
  index: number;
  /** The item's own id (`forEach.idPath`), if it has one. */
  identity: string | null;
  outcome: Extract<HookOutcome, { kind: 'wake' | 'agent' | 'event' }>;
  /** The item itself, as the payload held it. */
  item: unknown;
  /** Set after recording: the answer given for this item in an earlier request. */
  duplicateOf?: string;
}
