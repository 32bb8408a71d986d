import { z } from 'zod';
import { parseDurationMs } from '../common/parse-duration.js';

/** The `store` section: the driver, its connection, leases and retention. */

const nonEmpty = z.string().min(1);

const leaseSeconds = z
  .number()
  .min(1)
  .max(3600)
  .default(30)
  .describe('How long a claim (run, delivery, heartbeat turn) outlives a process that stopped renewing it.');

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
  events: retentionAge.default('30d').describe('Consumed system events.'),
  runs: retentionAge.default('30d').describe('Finished runs (succeeded, failed, timed out).'),
  deliveries: retentionAge.default('30d').describe('Sent, failed and skipped deliveries, with their attempts.'),
  transcript: retentionAge
    .default('30d')
    .describe(
      "Session transcript entries (a main session's history uses only its newest entries); a session idle this " +
        'long goes too, unless it is a main session or keeps a last route.',
    ),
  requests: retentionAge.default('7d').describe('Records of received requests.'),
  eventLog: retentionAge
    .default('7d')
    .describe('Published occurrences (the event log MCP subscribers read; written only with `mcp.enabled`).'),
});
const retention = RetentionSchema.prefault({}).describe(
  'How long finished work is kept (durations such as `30d`, `12h`, at most `36500d`); pending work is never pruned.',
);

export const StoreSchema = z.discriminatedUnion('driver', [
  z
    .strictObject({
      driver: z.literal('sqlite'),
      leaseSeconds,
      retention,
      path: nonEmpty
        .default('state/hookgate.db')
        .describe("Database file; a relative path resolves against the config file's directory."),
      sync: z
        .enum(['full', 'normal'])
        .default('full')
        .describe('`full` survives power loss; `normal` only a process crash.'),
    })
    .describe('The embedded SQLite database; one gateway holds it, under an exclusive lock.'),
  z
    .strictObject({
      driver: z.literal('postgres'),
      leaseSeconds,
      retention,
      url: nonEmpty.describe(
        '`postgres://user:pass@host:5432/db`; `${ENV}` substitution keeps the password out of the file.',
      ),
      schema: z
        .string()
        .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
        .default('public')
        .describe("Schema holding Hookgate's tables (created if missing); every replica of a fleet names the same."),
      poolSize: z.number().int().min(2).max(100).default(10).describe('Pooled connections per replica.'),
    })
    .describe('A PostgreSQL database that the replicas of a fleet share.'),
]);
