import type { Clock } from '../../common/clock.js';
import type { EventLog, LogEventRecord } from '../../store/index.js';
import { boundedData, MAX_DELIVERY_BYTES } from './build-deliveries.js';
import { encodeCursor } from './cursor.js';
import { findEventDefinition, parseEventArguments, type EventDefinition } from './event-catalog.js';
import { invalidParam } from './mcp-error.js';
import { parseMaxAgeMs, resolveStart } from './resolve-start.js';

/** Occurrences one poll returns unless it asks for fewer; and the most it may ask for. */
const DEFAULT_MAX_EVENTS = 100;
const MAX_EVENTS = 1000;
/** When a client with nothing more to read should poll again. */
const NEXT_POLL_MS = 1000;

function parseMaxEvents(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_MAX_EVENTS;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 1 || raw > MAX_EVENTS)
    throw invalidParam('maxEvents', `must be an integer from 1 to ${MAX_EVENTS}`);
  return raw;
}

/** An occurrence as a poll returns it; `data` cut to the delivery bound like a webhook's. */
function toOccurrence(e: LogEventRecord): Record<string, unknown> {
  return {
    eventId: e.id,
    name: e.name,
    timestamp: new Date(e.createdAt).toISOString(),
    data: JSON.parse(boundedData(e.dataJson, MAX_DELIVERY_BYTES)) as unknown,
    cursor: encodeCursor(e.seq),
  };
}

/**
 * `events/poll {name, arguments, cursor, maxAgeMs?, maxEvents?}` → `{events, cursor, truncated,
 * hasMore, nextPollMs}`. Reads up to the log's safe head only, so a cursor it returns is never
 * ahead of an occurrence still to commit below it; with nothing to read the cursor still moves to
 * the head, so a quiet subscription's cursor does not fall behind retention.
 */
export async function handlePoll(
  deps: { log: EventLog; definitions: () => readonly EventDefinition[]; clock: Clock },
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const definition = findEventDefinition(deps.definitions(), params['name']);
  const args = parseEventArguments(params['arguments']);
  const maxAgeMs = parseMaxAgeMs(params['maxAgeMs']);
  const limit = parseMaxEvents(params['maxEvents']);
  const now = deps.clock.now();
  const start = await resolveStart(deps.log, { cursor: params['cursor'], maxAgeMs, name: definition.name, args, now });
  if (params['cursor'] === undefined || params['cursor'] === null) {
    return {
      events: [],
      cursor: encodeCursor(start.after),
      truncated: false,
      hasMore: false,
      nextPollMs: NEXT_POLL_MS,
    };
  }
  const read = await deps.log.readLogEvents({
    name: definition.name,
    after: start.after,
    through: start.position.head,
    limit: limit + 1,
    ...args,
  });
  const hasMore = read.length > limit;
  const events = read.slice(0, limit);
  const cursor = hasMore ? events.at(-1)!.seq : start.position.head;
  return {
    events: events.map(toOccurrence),
    cursor: encodeCursor(cursor),
    truncated: start.truncated,
    hasMore,
    nextPollMs: NEXT_POLL_MS,
  };
}
