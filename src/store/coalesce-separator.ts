/** Between the messages of runs coalesced into one: the model reads them as separate arrivals. */
export const COALESCE_SEPARATOR = '\n\n--- another event about the same subject arrived ---\n\n';
