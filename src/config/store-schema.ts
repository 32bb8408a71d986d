import { z } from 'zod';
import { parseDurationMs } from '../common/parse-duration.js';

/** The `store` section: the driver, its connection, leases and retention. */

const nonEmpty = z.string().min(1);

/** How long a claim (run, delivery, heartbeat turn) outlives a process that stopped renewing it. */
const leaseSeconds = z.number().min(1).max(3600).default(30);

/**
 * The longest retention window, a century: a longer one keeps everything all the same, and the
 * cut-off it makes must stay a 64-bit integer (PostgreSQL's bigint) and exact as a JavaScript number.
 */
const MAX_RETENTION_MS = 36_500 * 86_400_000;

const retentionAge = z
  .string()
  .refine((v) => (parseDurationMs(v) ?? 0) > 0, 'a duration such as "30d" or "12h", at most 100 years ("36500d")')
  .refine((v) => (parseDurationMs(v) ?? 0) <= MAX_RETENTION_MS, 'a duration of at most 100 years ("36500d")');

/** How long finished work is kept before the background pruner deletes it. */
export const RetentionSchema = z.strictObject({
  /** Consumed system events. */
  events: retentionAge.default('30d'),
  /** Finished runs (succeeded, failed, timed out). */
  runs: retentionAge.default('30d'),
  /** Sent, failed and skipped deliveries, with their attempts. */
  deliveries: retentionAge.default('30d'),
  /** Session transcript entries (a main session's history uses only its newest entries). */
  transcript: retentionAge.default('30d'),
  /** Records of received requests. */
  requests: retentionAge.default('7d'),
  /** Published occurrences (the event log MCP subscribers read; written only with `mcp.enabled`). */
  eventLog: retentionAge.default('7d'),
});
const retention = RetentionSchema.prefault({});

export const StoreSchema = z.discriminatedUnion('driver', [
  z.strictObject({
    driver: z.literal('sqlite'),
    leaseSeconds,
    retention,
    /** Database file; relative paths resolve against the config file's directory. */
    path: nonEmpty.default('state/hookgate.db'),
    /** `full` survives power loss; `normal` only a process crash. */
    sync: z.enum(['full', 'normal']).default('full'),
  }),
  z.strictObject({
    driver: z.literal('postgres'),
    leaseSeconds,
    retention,
    /** `postgres://user:pass@host:5432/db`; `${ENV}` substitution keeps the password out of the file. */
    url: nonEmpty,
    /** Schema holding Hookgate's tables (created if missing). @default 'public' */
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('public'),
    /** Connections per replica. @default 10 */
    poolSize: z.number().int().min(2).max(100).default(10),
  }),
]);
