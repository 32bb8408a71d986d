import { z } from 'zod';
import { parseDurationMs } from '../common/parse-duration.js';

/** The `relay` and `pull` sections: a public relay that holds requests, and a home gateway that fetches them. */

const nonEmpty = z.string().min(1);

/** The longest a relay keeps a request nobody acknowledged: a year (its cut-off stays an exact integer either way). */
const MAX_RELAY_RETENTION_MS = 365 * 86_400_000;

export const RelaySchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe(
      'Run as a relay: verify, deduplicate and store each hook request for a home gateway to pull; no agents, ' +
        'no deliveries.',
    ),
  token: nonEmpty
    .optional()
    .describe(
      "The home gateway's bearer token for `/relay/lease` and `/relay/ack`; required when `enabled`; must differ " +
        'from `hooks.token`, `gateway.auth.token` and `mcp.token`.',
    ),
  leaseSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .describe("How long a leased batch is the home's before it is offered again (a home that died mid-batch)."),
  maxBatch: z.number().int().min(1).max(1000).default(100).describe('Requests one lease hands out at most.'),
  maxBatchBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(4 * 1024 * 1024)
    .describe('Body bytes one lease hands out at most (always one request, however large).'),
  maxWaitSeconds: z
    .number()
    .int()
    .min(0)
    .max(300)
    .default(30)
    .describe('Longest a lease waits for a request to arrive when none is waiting (the long poll).'),
  maxLeases: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(20)
    .describe('Leases a request gets without an acknowledgement before it is dead-lettered with the reason.'),
  retention: z
    .string()
    .refine((v) => (parseDurationMs(v) ?? 0) > 0, 'a duration such as "7d" or "12h"')
    .refine((v) => (parseDurationMs(v) ?? 0) <= MAX_RELAY_RETENTION_MS, 'a duration of at most a year ("365d")')
    .default('7d')
    .describe(
      'How long a request waits for the home (and a dead letter for an operator) before it is dropped, counted and ' +
        'logged; an acknowledged one keeps only its idempotency key, for `hooks.idempotencyWindowSeconds`.',
    ),
});

export const PullSchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/ })
    .describe("The relay's base URL, `https://relay.example.com`; the home leases from `<url>/relay/lease`."),
  token: nonEmpty.describe("The relay's `relay.token`; must differ from this gateway's own tokens."),
  waitSeconds: z
    .number()
    .int()
    .min(0)
    .max(300)
    .default(25)
    .describe('How long one lease may wait at the relay for a request (the relay caps it at `relay.maxWaitSeconds`).'),
  batchSize: z.number().int().min(1).max(1000).default(100).describe('Requests asked for per lease.'),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(32)
    .describe('Requests of a batch processed at once through the door (their commits are grouped).'),
  connectTimeoutSeconds: z
    .number()
    .min(0.1)
    .max(120)
    .default(10)
    .describe('How long a new connection to the relay (with its TLS handshake) may take.'),
  retryMaxSeconds: z
    .number()
    .min(1)
    .max(3600)
    .default(60)
    .describe('Longest pause between pulls while the relay cannot be reached (backoff with jitter up to it).'),
});

export type RelayConfig = z.infer<typeof RelaySchema>;
export type PullConfig = z.infer<typeof PullSchema>;
