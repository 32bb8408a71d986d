import { z } from 'zod';

/** Most events one pass reads and handles; more wait for the pass that follows at once. */
const MAX_CATCH_UP_EVENTS = 100_000;

const tokenEnv = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
  .describe(
    "Name of the environment variable holding the provider's API token (read from there at start and on " +
      'reload; never written in the config, never logged, never stored).',
  );
const every = z
  .union([z.string(), z.literal(0)])
  .default('10m')
  .describe(
    'How often a pass runs while the gateway is up, besides the one at start and `hookgate catch-up`; `0`: only those.',
  );
const maxEvents = z
  .number()
  .int()
  .min(1)
  .max(MAX_CATCH_UP_EVENTS)
  .default(10_000)
  .describe('Events one pass handles, oldest first; the rest are handled by the next pass, which follows at once.');
const apiBaseUrl = (value: string) =>
  z.url().optional().describe(`The provider API's base URL (a proxy, a test server). @default \`${value}\``);

/**
 * How a mapping recovers what its provider sent (or tried to send) while the gateway was away: the
 * provider's own record is read and each missed event goes through the mapping as if delivered.
 */
export const CatchUpSchema = z.discriminatedUnion('provider', [
  z
    .strictObject({
      provider: z.literal('github'),
      repo: z
        .string()
        .regex(/^[\w.-]+\/[\w.-]+$/, '"owner/name"')
        .optional()
        .describe('`owner/name` of the repository whose webhook this is (or `org`).'),
      org: z
        .string()
        .regex(/^[\w.-]+$/, 'an organization login')
        .optional()
        .describe('The organization whose webhook this is (or `repo`).'),
      hookId: z.number().int().positive().describe("The webhook's id: the number its settings page URL ends with."),
      tokenEnv,
      redeliver: z
        .boolean()
        .default(false)
        .describe(
          'Ask GitHub to redeliver each missed delivery (it arrives signed, at the public URL) instead of reading ' +
            'it and handling it here.',
        ),
      apiBaseUrl: apiBaseUrl('https://api.github.com'),
      every,
      maxEvents,
    })
    .describe("GitHub's webhook deliveries API: deliveries no attempt got a 2xx (or a deliberate 4xx) for."),
  z
    .strictObject({
      provider: z.literal('stripe'),
      tokenEnv,
      types: z
        .array(z.string().min(1))
        .min(1)
        .max(20)
        .optional()
        .describe('Only events of these types (the ones the endpoint is subscribed to). @default every type'),
      missedOnly: z
        .boolean()
        .default(true)
        .describe(
          'List only events Stripe has not delivered to every endpoint (`delivery_success=false`); `false` lists ' +
            'every event of the window (those already here are recognised by their id).',
        ),
      apiBaseUrl: apiBaseUrl('https://api.stripe.com'),
      every,
      maxEvents,
    })
    .describe("Stripe's events list, from the last event a pass handled."),
]);

export type CatchUpConfig = z.infer<typeof CatchUpSchema>;
