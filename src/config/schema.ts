import { z } from 'zod';
import { parsePath } from '../common/template-syntax.js';
import { RetentionSchema, StoreSchema } from './store-schema.js';
import { VerifySchema } from './verify-schema.js';

export { RetentionSchema, StoreSchema, VerifySchema };

/** Chat channels in the spec's order; `last` resolution falls back through them in this order. */
export const CHANNEL_NAMES = [
  'whatsapp',
  'telegram',
  'discord',
  'slack',
  'mattermost',
  'signal',
  'imessage',
  'msteams',
] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
export const CHANNEL_VALUES = ['last', ...CHANNEL_NAMES] as const;
export type ChannelValue = (typeof CHANNEL_VALUES)[number];

export const WAKE_MODES = ['now', 'next-heartbeat'] as const;
export type WakeMode = (typeof WAKE_MODES)[number];

/** Thinking levels accepted in payloads and config; each provider maps them to its own setting. */
export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** Upper bound for `timeoutSeconds`, kept well under the 24.8-day limit of Node timers. */
export const MAX_TIMEOUT_SECONDS = 86_400;

const timeoutSeconds = z.number().positive().max(MAX_TIMEOUT_SECONDS);
const nonEmpty = z.string().min(1);

/** Limits on an agent's runs; over them, runs stay queued (held) until the window allows them. */
export const BudgetSchema = z.strictObject({
  /** Runs that may start in any rolling hour. */
  runsPerHour: z.number().int().min(1).max(1_000_000).optional(),
  /** Tokens (input + output, as the provider reports them) runs started in any rolling 24 h may spend. */
  tokensPerDay: z.number().int().min(1).max(1e12).optional(),
});

/** A mapping's budget: an agent's, and how many of its runs may run at once. */
export const MappingBudgetSchema = BudgetSchema.extend({
  maxConcurrentRuns: z.number().int().min(1).max(256).optional(),
});

export const MappingSchema = z.strictObject({
  id: nonEmpty.optional(),
  match: z.strictObject({ path: z.string().optional(), source: z.string().optional() }).optional(),
  action: z.enum(['wake', 'agent']).optional(),
  wakeMode: z.enum(WAKE_MODES).optional(),
  name: z.string().optional(),
  agentId: nonEmpty.optional(),
  sessionKey: nonEmpty.optional(),
  messageTemplate: z.string().optional(),
  textTemplate: z.string().optional(),
  deliver: z.boolean().optional(),
  channel: z.enum(CHANNEL_VALUES).optional(),
  to: z.string().optional(),
  model: z.string().optional(),
  thinking: z.string().optional(),
  timeoutSeconds: timeoutSeconds.optional(),
  allowUnsafeExternalContent: z.boolean().optional(),
  verify: VerifySchema.optional(),
  /** One action per item of an array in the payload (`item` in templates and transforms). */
  forEach: z
    .strictObject({
      /** Where the array is, as a template path: `messages`, `data.items`. */
      path: z.string().refine((p) => parsePath(p) !== null, 'a path such as "messages" or "data.items"'),
      /** Items one request may carry; more is a 400. @default 100 */
      maxItems: z.number().int().min(1).max(1000).default(100),
      /** Path inside an item to its own id: its idempotency identity across requests. */
      idPath: z
        .string()
        .refine((p) => parsePath(p) !== null, 'a path such as "id"')
        .optional(),
    })
    .optional(),
  /**
   * Runs about one subject arriving in a burst become one run: while a run with the same rendered
   * `key` is still queued (and younger than `windowSeconds`), a new one adds its message to it.
   */
  coalesce: z
    .strictObject({
      key: z.string().min(1),
      windowSeconds: z.number().int().min(1).max(86_400).default(60),
    })
    .optional(),
  /** The sender's request waits for the run to end (up to its timeout, capped by `hooks.maxWaitSeconds`). */
  waitForCompletion: z.boolean().optional(),
  /** With `waitForCompletion`, the answer carries the model's reply. */
  returnReply: z.boolean().optional(),
  /** Limits on this mapping's agent runs (beside its agent's own budget). */
  budget: MappingBudgetSchema.optional(),
  transform: z
    .strictObject({
      /** JS or TS module, relative to the transforms directory. */
      module: nonEmpty,
      /** Export to call. @default 'default' */
      export: nonEmpty.optional(),
      /** Time the transform may take. @default 5000 */
      timeoutMs: z.number().int().min(1).max(600_000).optional(),
      /** Memory cap of this mapping's transform process: heap, and the rest of its resident memory through a watchdog. @default 128 */
      maxMemoryMb: z.number().int().min(16).max(16_384).optional(),
    })
    .optional(),
});

export const AuthRateLimitSchema = z.strictObject({
  /** Failures within the window that start a lockout. */
  maxFailures: z.number().int().min(1).default(20),
  windowSeconds: z.number().int().min(1).default(60),
  lockoutSeconds: z.number().int().min(1).default(60),
  /** Client addresses tracked at once; the least recently seen is forgotten past this. */
  maxClients: z.number().int().min(1).default(10_000),
});

export const HooksSchema = z.strictObject({
  enabled: z.boolean().default(false),
  token: nonEmpty.optional(),
  path: z.string().default('/hooks'),
  allowedAgentIds: z.array(nonEmpty).optional(),
  defaultSessionKey: nonEmpty.optional(),
  allowRequestSessionKey: z.boolean().default(false),
  allowedSessionKeyPrefixes: z.array(nonEmpty).optional(),
  presets: z.array(z.enum(['gmail'])).default([]),
  mappings: z.array(MappingSchema).default([]),
  transformsDir: nonEmpty.optional(),
  /** Transform processes alive at once (one per mapping in use); past it the one idle the longest ends. @default 8 */
  maxTransformProcesses: z.number().int().min(1).max(256).optional(),
  // Written by a setup command; only the keys Hookgate reads are typed, the rest are kept.
  gmail: z
    .looseObject({
      model: z.string().optional(),
      thinking: z.enum(THINKING_LEVELS).optional(),
      allowUnsafeExternalContent: z.boolean().optional(),
    })
    .optional(),
  maxBodyBytes: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
  /** Request bodies read at once from one client address; more get 429 `too_many_bodies`. */
  maxBodiesPerClient: z.number().int().min(1).max(100_000).default(64),
  /** Longest a `waitForCompletion` request is held open. */
  maxWaitSeconds: z.number().int().min(1).max(3600).default(120),
  /** How long a request's idempotency key (or its sender's delivery id) is remembered; 72 h covers GitHub's, Stripe's and Slack's retries. */
  idempotencyWindowSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(72 * 3600),
  authRateLimit: AuthRateLimitSchema.prefault({}),
});

export const GatewaySchema = z.strictObject({
  bind: nonEmpty.default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(8787),
  auth: z.strictObject({ token: nonEmpty.optional() }).prefault({}),
  /** Addresses or CIDR ranges whose `X-Forwarded-For` is believed. */
  trustedProxies: z.array(nonEmpty).default([]),
  /** Time allowed to receive a request body before 408. */
  bodyTimeoutMs: z.number().int().min(1).max(3_600_000).default(30_000),
  /**
   * Open client connections; the excess is answered 503 `over_capacity` and closed. Default: 1000,
   * or the open-file limit minus 96 when that is lower (resolved at startup).
   */
  maxConnections: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * Open connections from one client address (an IPv6 /64), loopback peers and trusted proxies
   * aside; the excess is answered 429 `too_many_connections` and closed. Default: a quarter of
   * `maxConnections`.
   */
  maxConnectionsPerClient: z.number().int().min(1).max(1_000_000).optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Keep each hook request's body in its request record (for the admin API's replay). */
  recordPayloads: z.boolean().default(false),
  /** `GET /metrics`; `public: true` serves it without the gateway token. */
  metrics: z.strictObject({ public: z.boolean().default(false) }).prefault({}),
});

/**
 * What is logged besides `gateway.logLevel`. The access log is one `info` line per hook request
 * (`"msg":"hook request"`: method, path without its query, hook, client, status, code, ms, and the
 * event or run it created); its fields are fixed and carry no payload, header or token.
 */
export const LoggingSchema = z.strictObject({
  /**
   * `all`: a line per request; `refusals`: only requests not accepted (4xx, 5xx, and clients that
   * left before their answer); `off`: none. While load is shed (503), at most 10 lines of shed
   * requests are written per 10 s, and one line then says how many were held back, by code.
   * @default 'all'
   */
  access: z.enum(['all', 'refusals', 'off']).default('all'),
  /**
   * The share of accepted requests' lines written (0.01: one in a hundred), evenly spaced;
   * refusals are always written. @default 1
   */
  accessSample: z.number().gt(0).max(1).default(1),
});

const ModelEntrySchema = z.strictObject({ alias: nonEmpty.optional() });

export const AgentsSchema = z.strictObject({
  defaults: z
    .strictObject({
      model: nonEmpty.optional(),
      /** Allow-list of model refs (`provider/model`) with optional aliases; empty or omitted: any. */
      models: z.record(z.string(), ModelEntrySchema).optional(),
      timeoutSeconds: timeoutSeconds.default(600),
      thinking: z.enum(THINKING_LEVELS).optional(),
      maxConcurrentRuns: z.number().int().min(1).max(256).default(4),
      /** Each agent's run budget, unless the agent sets its own (field by field). */
      budget: BudgetSchema.optional(),
      heartbeat: z
        .strictObject({
          every: z.union([z.string(), z.literal(0)]).default('30m'),
          prompt: z.string().optional(),
          ackMaxChars: z.number().int().min(0).default(300),
          /** After a turn that took a flood's digest, requested turns wait this long (0: not at all). */
          floodPause: z.union([z.string(), z.literal(0)]).default('30s'),
        })
        .prefault({}),
    })
    .prefault({}),
  list: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'agent id: letters, digits, "-" or "_", at most 64'),
        default: z.boolean().optional(),
        name: z.string().optional(),
        workspace: z.string().optional(),
        model: nonEmpty.optional(),
        /** This agent's run budget, over `agents.defaults.budget`. */
        budget: BudgetSchema.optional(),
      }),
    )
    .default([]),
});

export const ModelsSchema = z.strictObject({
  providers: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'provider id: letters, digits, ".", "-" or "_"'),
      z.strictObject({
        api: z.enum(['openai', 'anthropic', 'echo']),
        baseUrl: z.url().optional(),
        apiKey: z.string().optional(),
        headers: z.record(z.string(), z.string()).optional(),
      }),
    )
    .default({}),
});

const channelCommon = { defaultTo: nonEmpty.optional(), timeoutMs: z.number().int().min(1).max(600_000).optional() };
const optionalUrl = z.url().optional();

export const ChannelsSchema = z.strictObject({
  whatsapp: z
    .strictObject({ ...channelCommon, accessToken: nonEmpty, phoneNumberId: nonEmpty, baseUrl: optionalUrl })
    .optional(),
  telegram: z.strictObject({ ...channelCommon, botToken: nonEmpty, baseUrl: optionalUrl }).optional(),
  discord: z.strictObject({ ...channelCommon, botToken: nonEmpty, baseUrl: optionalUrl }).optional(),
  slack: z.strictObject({ ...channelCommon, botToken: nonEmpty, baseUrl: optionalUrl }).optional(),
  mattermost: z.strictObject({ ...channelCommon, baseUrl: z.url(), token: nonEmpty }).optional(),
  signal: z.strictObject({ ...channelCommon, baseUrl: z.url(), account: nonEmpty }).optional(),
  imessage: z.strictObject({ ...channelCommon, baseUrl: z.url(), password: nonEmpty }).optional(),
  msteams: z
    .strictObject({
      ...channelCommon,
      appId: nonEmpty,
      appPassword: nonEmpty,
      tenantId: nonEmpty.optional(),
      /** The Bot Framework service URL of the tenant's conversations (e.g. https://smba.trafficmanager.net/amer/). */
      serviceUrl: z.url(),
      tokenUrl: optionalUrl,
    })
    .optional(),
});

export const ConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  gateway: GatewaySchema.prefault({}),
  logging: LoggingSchema.prefault({}),
  hooks: HooksSchema.prefault({}),
  agents: AgentsSchema.prefault({}),
  models: ModelsSchema.prefault({}),
  channels: ChannelsSchema.prefault({}),
  store: StoreSchema.prefault({ driver: 'sqlite' }),
});

export type Config = z.infer<typeof ConfigSchema>;
export type HooksConfig = z.infer<typeof HooksSchema>;
export type GatewayConfig = z.infer<typeof GatewaySchema>;
export type LoggingConfig = z.infer<typeof LoggingSchema>;
export type AgentsConfig = z.infer<typeof AgentsSchema>;
export type MappingConfig = z.infer<typeof MappingSchema>;
export type VerifyConfig = z.infer<typeof VerifySchema>;
export type StoreConfig = z.infer<typeof StoreSchema>;
export type RetentionConfig = z.infer<typeof RetentionSchema>;
export type BudgetConfig = z.infer<typeof MappingBudgetSchema>;
export type ChannelsConfig = z.infer<typeof ChannelsSchema>;
export type AuthRateLimitConfig = z.infer<typeof AuthRateLimitSchema>;
