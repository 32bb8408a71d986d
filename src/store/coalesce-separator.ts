/** Between the messages of runs coalesced into one: the model reads them as separate arrivals. */
export const COALESCE_SEPARATOR = '\n\n--- another event about the same subject arrived ---\n\n';

/**
 * The longest a coalesced run's message grows (characters): a message that would take it past this
 * queues a run of its own, which the key's later messages join. A burst about one key is then a
 * few runs instead of one message that grows with every request (rewritten whole at each join, and
 * read whole by the run).
 */
export const MAX_COALESCED_CHARS = 256 * 1024;

/** What joining `message` adds to a coalesced run's message, in characters. */
export const coalescedGrowth = (message: string): number => COALESCE_SEPARATOR.length + message.length;
