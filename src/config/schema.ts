import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { parsePath } from '../common/template-syntax.js';
import { RetentionSchema, StoreSchema } from './store-schema.js';
import { VerifySchema } from './verify-schema.js';
import { CatchUpSchema } from './catch-up-schema.js';
import { PullSchema, RelaySchema } from './relay-schema.js';

export { RetentionSchema, StoreSchema };
export type { CatchUpConfig } from './catch-up-schema.js';
export type { PullConfig, RelayConfig } from './relay-schema.js';

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

/**
 * A run's time limit in the config (a mapping's, the agents' default): at least a second, since a
 * model turn takes longer than that and a shorter limit fails every run. A request's own
 * `timeoutSeconds` is the sender's to choose (any positive number).
 */
const timeoutSeconds = z.number().min(1).max(MAX_TIMEOUT_SECONDS);
/** Shortest periodic heartbeat: each tick is a paid model turn (1 ms was about 4 turns a second). */
export const MIN_HEARTBEAT_EVERY_MS = 60_000;
/** Shortest wait for a request body, or for a chat service's answer: the network takes longer than less. */
const MIN_NETWORK_TIMEOUT_MS = 1000;
/** Shortest transform time limit: starting a call in its process takes longer than less. */
const MIN_TRANSFORM_TIMEOUT_MS = 100;
const nonEmpty = z.string().min(1);
/** A service's address: `http://` or `https://` only (not `file:`, `ftp:`, `javascript:`, …). */
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/** Risks a mapping may accept by name in `acceptRisk` (see `hookgate check`). */
const ACCEPTABLE_RISKS = ['exfiltration'] as const;

/** Limits on an agent's runs; over them, runs stay queued (held) until the window allows them. */
const BudgetSchema = z.strictObject({
  runsPerHour: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe('Runs that may start in any rolling hour (a run counts once, when it first starts).'),
  tokensPerDay: z
    .number()
    .int()
    .min(1)
    .max(1e12)
    .optional()
    .describe('Tokens (input + output, as the provider reports them) runs started in any rolling 24 h may spend.'),
});

/** A mapping's budget: an agent's, and how many of its runs may run at once. */
const MappingBudgetSchema = BudgetSchema.extend({
  maxConcurrentRuns: z
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe("Runs of the mapping running at once, within the gateway's `agents.defaults.maxConcurrentRuns`."),
});

const MappingSchema = z
  .strictObject({
    id: nonEmpty
      .optional()
      .describe("Name in logs, request records, budgets and the action's source. @default `mappings[<index>]`"),
    match: z
      .strictObject({
        path: z
          .string()
          .optional()
          .describe(
            'The `<name>` in `/hooks/<name>`: slashes around it ignored, case-sensitive; not `wake` or `agent`.',
          ),
        source: z.string().optional().describe("Equals the payload's string `source` field."),
        headers: z
          .record(z.string().min(1), z.union([z.string(), z.array(z.string()).min(1)]))
          .optional()
          .describe(
            'Request headers that must be present with one of these values, e.g. `{"x-github-event": "ping"}` or `{"x-github-event": ["push", "pull_request"]}`: names in any case, values exact.',
          ),
      })
      .optional()
      .describe('Which requests the mapping serves: with both keys, both must hold; with neither, every name matches.'),
    action: z
      .enum(['wake', 'agent', 'event', 'ignore'])
      .optional()
      .describe(
        'What the mapping builds; `event` records and publishes the hook only (MCP Events), with no wake or run; ' +
          '`ignore` builds nothing and answers 200 `{"ok": true, "ignored": true}` (GitHub\'s `ping`). ' +
          '@default `agent`',
      ),
    wakeMode: z.enum(WAKE_MODES).optional().describe("The wake's `mode`, or the run's `wakeMode`. @default `now`"),
    name: z.string().optional().describe("Hook name in the run's summary (`Hook <name>: ...`); a template."),
    agentId: nonEmpty
      .optional()
      .describe(
        'Agent of the action; checked against `hooks.allowedAgentIds`; an unknown id falls back to the default.',
      ),
    sessionKey: nonEmpty
      .optional()
      .describe("The run's session key, a template; must match `hooks.allowedSessionKeyPrefixes`."),
    messageTemplate: z
      .string()
      .optional()
      .describe("The run's message. @default the payload's `message`, else the payload as JSON"),
    textTemplate: z
      .string()
      .optional()
      .describe("The wake's text. @default the payload's `text`, else the payload as JSON"),
    deliver: z.boolean().optional().describe("Whether the run's reply is delivered to a chat channel. @default `true`"),
    channel: z
      .enum(CHANNEL_VALUES)
      .optional()
      .describe(
        'Channel of the reply; a named one must be configured under `channels` unless `deliver` is false. @default `last`',
      ),
    to: z.string().optional().describe('Recipient on the channel; a template.'),
    model: z.string().optional().describe('Model of the run, `<provider>/<model>` or an alias; a template.'),
    thinking: z.string().optional().describe('Thinking level of the run; a template.'),
    timeoutSeconds: timeoutSeconds
      .optional()
      .describe('Longest the run may take, model retries included. @default `agents.defaults.timeoutSeconds`'),
    allowUnsafeExternalContent: z
      .boolean()
      .optional()
      .describe('`true` turns the untrusted-content wrapper off for this mapping (`hookgate check` warns).'),
    publishPayload: z
      .boolean()
      .optional()
      .describe(
        'Published occurrences of this mapping (MCP Events) carry the raw payload as `data.payload`. @default `false`',
      ),
    priority: z
      .enum(['normal', 'high'])
      .optional()
      .describe(
        "`high`: a heartbeat digest over a flood lists this mapping's events one by one, in full, before anything " +
          "else, never folded into a kind; those that do not fit wait for the next heartbeat. Its runs' summaries " +
          'keep it. @default `normal`',
      ),
    acceptRisk: z
      .array(z.enum(ACCEPTABLE_RISKS))
      .optional()
      .describe(
        '`["exfiltration"]` lets a mapping start although an unverified sender, `allowUnsafeExternalContent` and a ' +
          'reply sent where the request says (or returned to the caller) meet in it; without it `hookgate check` ' +
          'and startup refuse that.',
      ),
    verify: VerifySchema.optional().describe(
      "The sender's signature scheme, checked over the raw body instead of the hook token.",
    ),
    catchUp: CatchUpSchema.optional().describe(
      'Recover what the provider sent while the gateway was away, at start, every `every` and with ' +
        '`hookgate catch-up`: needs `match.path` and a `verify` of the same provider.',
    ),
    forEach: z
      .strictObject({
        path: z
          .string()
          .refine((p) => parsePath(p) !== null, 'a path such as "messages" or "data.items"')
          .describe('Where the array is, as a template path: `messages`, `data.items`.'),
        maxItems: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .default(100)
          .describe('Items one request may carry; more is a 400.'),
        idPath: z
          .string()
          .refine((p) => parsePath(p) !== null, 'a path such as "id"')
          .optional()
          .describe('Path inside an item to its own id: its idempotency identity across requests.'),
      })
      .optional()
      .describe('One action per item of an array in the payload (`item` in templates and transforms).'),
    coalesce: z
      .strictObject({
        key: z
          .string()
          .min(1)
          .describe('Template whose rendered value names the subject; an empty value does not coalesce.'),
        windowSeconds: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .default(60)
          .describe('How long the first run of a subject waits in the queue for others to join it.'),
      })
      .optional()
      .describe(
        'Runs about one subject arriving in a burst become one run: while a run with the same rendered `key` ' +
          'is still queued (and younger than `windowSeconds`), a new one adds its message to it.',
      ),
    waitForCompletion: z
      .boolean()
      .optional()
      .describe("The sender's request waits for the run to end (up to its timeout, capped by `hooks.maxWaitSeconds`)."),
    returnReply: z.boolean().optional().describe("With `waitForCompletion`, the answer carries the model's reply."),
    budget: MappingBudgetSchema.optional().describe(
      "Limits on this mapping's agent runs (beside its agent's own budget).",
    ),
    transform: z
      .strictObject({
        module: nonEmpty.describe('JS or TS module, relative to the transforms directory.'),
        export: nonEmpty.optional().describe('Export to call. @default the default export, else one named `transform`'),
        timeoutMs: z
          .number()
          .int()
          .min(MIN_TRANSFORM_TIMEOUT_MS)
          .max(600_000)
          .optional()
          .describe('Time the transform may take, at least 100 ms. @default 5000'),
        maxMemoryMb: z
          .number()
          .int()
          .min(16)
          .max(16_384)
          .optional()
          .describe(
            "Memory cap of this mapping's transform process: heap, and the rest of its resident memory through a " +
              'watchdog. @default 128',
          ),
        env: z
          .record(
            z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name (letters, digits, _)')
              // It could hand the process Node flags that lift its permissions.
              .refine((name) => name.toUpperCase() !== 'NODE_OPTIONS', 'NODE_OPTIONS cannot be given to a transform'),
            z.string(),
          )
          .optional()
          .describe(
            "The whole environment of this mapping's transform process (it inherits none of the gateway's): " +
              "variable name to value, a value usually a `${VAR}` of the gateway's own. Values of names holding KEY, " +
              'TOKEN, SECRET, PASSWORD, AUTH or CREDENTIAL are scrubbed from logs, stored errors and transform ' +
              'results. @default `{}`',
          ),
      })
      .optional()
      .describe('Code that adjusts the action, replaces it or skips the call; it runs in a process of its own.'),
  })
  .describe('A mapping turns the payload sent to `/hooks/<name>` into a wake or an agent run.');

const AuthRateLimitSchema = z.strictObject({
  maxFailures: z.number().int().min(1).default(20).describe('Failures within the window that start a lockout.'),
  windowSeconds: z.number().int().min(1).default(60).describe('The sliding window failures are counted in.'),
  lockoutSeconds: z
    .number()
    .int()
    .min(1)
    .default(60)
    .describe('How long a locked-out client is answered 429 `rate_limited` without its token being looked at.'),
  maxClients: z
    .number()
    .int()
    .min(1)
    .default(10_000)
    .describe('Client addresses tracked at once; the least recently seen is forgotten past this.'),
});

export const HooksSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Turns the hook endpoints on.'),
  token: nonEmpty
    .optional()
    .describe(
      'The hook token senders present; required when `enabled`; must differ from `gateway.auth.token`; ' +
        '`hookgate check` warns below 24 characters.',
    ),
  path: z.string().default('/hooks').describe('URL prefix of the hook endpoints; `/` is refused.'),
  allowedAgentIds: z
    .array(nonEmpty)
    .optional()
    .describe('Agent ids a request or mapping may name; `*` allows any, `[]` none. @default any'),
  defaultSessionKey: nonEmpty
    .optional()
    .describe(
      'Session key of agent runs that name none; must match `allowedSessionKeyPrefixes`. ' +
        '@default a fresh `hook:<uuid>` per run',
    ),
  allowRequestSessionKey: z.boolean().default(false).describe('Whether `/hooks/agent` may set `sessionKey`.'),
  allowedSessionKeyPrefixes: z
    .array(nonEmpty)
    .optional()
    .describe(
      "Prefixes a request's or mapping's session key must start with; must include `hook:` when " +
        '`defaultSessionKey` is unset. @default any',
    ),
  presets: z
    .array(z.enum(['gmail']))
    .default([])
    .describe("Built-in mappings; `gmail` serves `/hooks/gmail` for the mail watcher's payload."),
  mappings: z
    .array(MappingSchema)
    .default([])
    .describe('Hooks at `/hooks/<name>` built from any payload, tried in order before the presets.'),
  transformsDir: nonEmpty
    .optional()
    .describe(
      'Directory of transform modules; must stay inside `<config dir>/hooks/transforms`, symlinks included. ' +
        '@default `<config dir>/hooks/transforms`',
    ),
  maxTransformProcesses: z
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe(
      'Transform processes alive at once (one per mapping in use); past it the one idle the longest ends. @default 8',
    ),
  // Written by a setup command; only the keys Hookgate reads are typed, the rest are kept.
  gmail: z
    .looseObject({
      model: z.string().optional().describe("Model of the preset's runs."),
      thinking: z.enum(THINKING_LEVELS).optional().describe("Thinking level of the preset's runs."),
      allowUnsafeExternalContent: z
        .boolean()
        .optional()
        .describe('`true` turns the untrusted-content wrapper off for the preset.'),
    })
    .optional()
    .describe("The `gmail` preset's settings; other keys (the mail watcher's own) are kept and not acted on."),
  maxBodyBytes: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .default(256 * 1024)
    .describe("Request body cap (413 `payload_too_large` above it); also the cap on a transform's result as JSON."),
  maxBodiesPerClient: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(64)
    .describe('Request bodies read at once from one client address (an IPv6 /64); more get 429 `too_many_bodies`.'),
  maxWaitSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(120)
    .describe('Longest a `waitForCompletion` request is held open.'),
  idempotencyWindowSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(72 * 3600)
    .describe(
      "How long a request's idempotency key (or its sender's delivery id) is remembered; 72 h covers GitHub's, " +
        "Stripe's and Slack's retries.",
    ),
  authRateLimit: AuthRateLimitSchema.prefault({}).describe(
    'Lockout after repeated authentication failures from one client address (an IPv6 /64).',
  ),
});

/** A number of open connections; the default is resolved at startup from the open-file limit. */
const connectionCount = z.number().int().min(1).max(1_000_000).optional();

const GatewaySchema = z.strictObject({
  bind: nonEmpty
    .default('127.0.0.1')
    .describe(
      'Address to listen on: an address of this machine, or a name resolving to one; `serve --bind` overrides it.',
    ),
  port: z
    .number()
    .int()
    .min(0)
    .max(65_535)
    .default(8787)
    .describe('Port to listen on; `HOOKGATE_PORT` and `serve --port` override it.'),
  auth: z
    .strictObject({
      token: nonEmpty
        .optional()
        .describe(
          'The gateway token, for the admin API, the dashboard and `/metrics`; without it the admin API is off.',
        ),
    })
    .prefault({}),
  trustedProxies: z
    .array(nonEmpty)
    .default([])
    .describe(
      'Addresses or CIDR ranges whose `X-Forwarded-For` is believed: the client is the right-most hop that is ' +
        'not one of them.',
    ),
  bodyTimeoutMs: z
    .number()
    .int()
    .min(MIN_NETWORK_TIMEOUT_MS)
    .max(3_600_000)
    .default(30_000)
    .describe('Time allowed to receive a request body before 408 `body_timeout`.'),
  maxConnections: connectionCount.describe(
    'Open client connections. At the limit a new connection takes the place of the oldest that has not sent a ' +
      'complete request yet (else of the one idle longest between requests); only when every connection has a ' +
      'request in flight is the newcomer answered 503 `over_capacity` and closed. ' +
      '@default 1000, or the open-file limit minus 96 when that is lower',
  ),
  maxConnectionsPerClient: connectionCount.describe(
    'Open connections from one client address (an IPv6 /64), loopback peers and trusted proxies aside, at most; ' +
      'the excess is answered 429 `too_many_connections` and closed. Set or not, a client may hold at most half ' +
      'of the connections the other clients leave free (at least one). @default no cap beyond that share',
  ),
  firstByteTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(5_000)
    .describe(
      'How long a new connection may send nothing (from its opening, and between the bytes of its first ' +
        "request's headers) before it is closed unanswered; complete headers are then due within 20 s of their " +
        'first byte (408 `headers_timeout`).',
    ),
  logLevel: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'])
    .default('info')
    .describe('Lowest level written to the log; `silent` writes nothing.'),
  recordPayloads: z
    .boolean()
    .default(false)
    .describe("Keep each authenticated hook request's body in its request record (the admin API's replay needs it)."),
  metrics: z
    .strictObject({
      public: z.boolean().default(false).describe('Serve `GET /metrics` without the gateway token.'),
    })
    .prefault({}),
});

/**
 * What is logged besides `gateway.logLevel`. The access log is one `info` line per hook request
 * (`"msg":"hook request"`: method, path without its query, hook, client, status, code, ms, and the
 * event or run it created); its fields are fixed and carry no payload, header or token.
 */
const LoggingSchema = z.strictObject({
  access: z
    .enum(['all', 'refusals', 'off'])
    .default('all')
    .describe(
      'The access log, an `info` line per hook request: `all`; `refusals`, only requests not accepted (4xx, 5xx, ' +
        'clients that left before their answer); `off`. While load is shed (503), at most 10 lines of shed requests ' +
        'are written per 10 s and one line then counts the rest, by code.',
    ),
  accessSample: z
    .number()
    .gt(0)
    .max(1)
    .default(1)
    .describe(
      "The share of accepted requests' access lines written (0.01: one in a hundred), evenly spaced; refusals are always written.",
    ),
});

const ModelEntrySchema = z.strictObject({
  alias: nonEmpty.optional().describe('A short name requests and mappings may use for this model.'),
});

const AgentsSchema = z.strictObject({
  defaults: z
    .strictObject({
      model: nonEmpty
        .optional()
        .describe('Model of agents that name none: `<provider>/<model>` or an alias. @default `echo/echo`'),
      models: z
        .record(z.string(), ModelEntrySchema)
        .optional()
        .describe(
          "Allow-list of model refs (`provider/model`) with optional aliases; empty or omitted: any. Agents' " +
            'own models must be on it.',
        ),
      timeoutSeconds: timeoutSeconds.default(600).describe('Longest a run may take, model retries included.'),
      thinking: z.enum(THINKING_LEVELS).optional().describe('Thinking level of runs that name none.'),
      maxConcurrentRuns: z
        .number()
        .int()
        .min(1)
        .max(256)
        .default(4)
        .describe('Runs executing at once in this gateway (each replica of a fleet has its own).'),
      budget: BudgetSchema.optional().describe(
        "Each agent's run budget, unless the agent sets its own (field by field).",
      ),
      heartbeat: z
        .strictObject({
          every: z
            .union([z.string(), z.literal(0)])
            .default('30m')
            .describe('Period of the periodic heartbeat turn, at most `24d`; `0` turns it off.'),
          prompt: z
            .string()
            .optional()
            .describe('The heartbeat prompt. @default asks for `HEARTBEAT_OK` when nothing needs attention'),
          ackMaxChars: z
            .number()
            .int()
            .min(0)
            .default(300)
            .describe('A reply holding `HEARTBEAT_OK` and at most this many other characters is not delivered.'),
          floodPause: z
            .union([z.string(), z.literal(0)])
            .default('30s')
            .describe("After a turn that took a flood's digest, requested turns wait this long (0: not at all)."),
        })
        .prefault({})
        .describe("Turns on each agent's main session that read its pending system events."),
    })
    .prefault({})
    .describe('What every agent gets unless it sets its own.'),
  list: z
    .array(
      z
        .strictObject({
          id: z
            .string()
            .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'agent id: letters, digits, "-" or "_", at most 64')
            .describe('Agent id; its main session is `agent:<id>:main`.'),
          default: z.boolean().optional().describe('This is the default agent.'),
          name: z.string().optional().describe('Display name.'),
          workspace: z
            .string()
            .optional()
            .describe(
              "Directory whose `AGENTS.md` joins the system prompt, read every turn; relative to the config's.",
            ),
          model: nonEmpty.optional().describe("This agent's model. @default `agents.defaults.model`"),
          budget: BudgetSchema.optional().describe("This agent's run budget, over `agents.defaults.budget`."),
        })
        .describe('An agent: its main session, model, workspace and budget.'),
    )
    .default([])
    .describe('The agents; the default one has `default: true`, else it is the first, else `main`.'),
});

const ModelsSchema = z.strictObject({
  providers: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'provider id: letters, digits, ".", "-" or "_"'),
      z.strictObject({
        api: z
          .enum(['openai', 'anthropic', 'echo'])
          .describe(
            '`openai`: any OpenAI-compatible Chat Completions API; `anthropic`: the Messages API; `echo`: offline.',
          ),
        baseUrl: httpUrl
          .optional()
          .describe(
            'API base: `{baseUrl}/chat/completions` or `{baseUrl}/v1/messages` is called. ' +
              '@default `https://api.openai.com/v1`, `https://api.anthropic.com`',
          ),
        apiKey: z.string().optional().describe('API key; write `${ENV_VAR}` to keep it out of the file.'),
        headers: z.record(z.string(), z.string()).optional().describe('Headers sent with every call.'),
      }),
    )
    .default({})
    .describe('Model providers by id; a model ref is `<provider id>/<model>`. `echo` is built in.'),
});

const channelCommon = {
  defaultTo: nonEmpty.optional().describe('Recipient of a delivery that names none when the session has no last one.'),
  timeoutMs: z
    .number()
    .int()
    .min(MIN_NETWORK_TIMEOUT_MS)
    .max(600_000)
    .optional()
    .describe('Time one API call may take. @default 10000'),
};
/** Where the service's API is, to reach it through a proxy or a test server. */
const baseUrl = (value: string) => httpUrl.optional().describe(`The API's base URL. @default \`${value}\``);
const serverUrl = (what: string) => httpUrl.describe(`URL of ${what}.`);

const ChannelsSchema = z.strictObject({
  whatsapp: z
    .strictObject({
      ...channelCommon,
      accessToken: nonEmpty.describe('WhatsApp Cloud API access token.'),
      phoneNumberId: nonEmpty.describe('Id of the sending phone number.'),
      baseUrl: baseUrl('https://graph.facebook.com/v21.0'),
    })
    .optional()
    .describe('WhatsApp Cloud API; `to` is a phone number.'),
  telegram: z
    .strictObject({
      ...channelCommon,
      botToken: nonEmpty.describe('The bot token @BotFather gives.'),
      baseUrl: baseUrl('https://api.telegram.org'),
    })
    .optional()
    .describe('Telegram Bot API; `to` is a chat id.'),
  discord: z
    .strictObject({
      ...channelCommon,
      botToken: nonEmpty.describe('Bot token.'),
      baseUrl: baseUrl('https://discord.com/api/v10'),
    })
    .optional()
    .describe('Discord; `to` is a channel id.'),
  slack: z
    .strictObject({
      ...channelCommon,
      botToken: nonEmpty.describe('Bot token (`xoxb-...`).'),
      baseUrl: baseUrl('https://slack.com/api'),
    })
    .optional()
    .describe('Slack `chat.postMessage`; `to` is a channel id.'),
  mattermost: z
    .strictObject({
      ...channelCommon,
      baseUrl: serverUrl('the Mattermost server'),
      token: nonEmpty.describe('Bot or personal access token.'),
    })
    .optional()
    .describe('Mattermost; `to` is a channel id.'),
  signal: z
    .strictObject({
      ...channelCommon,
      baseUrl: serverUrl('the signal-cli REST API'),
      account: nonEmpty.describe("The sending account's own number."),
    })
    .optional()
    .describe('Signal through signal-cli REST API; `to` is a phone number.'),
  imessage: z
    .strictObject({
      ...channelCommon,
      baseUrl: serverUrl('the BlueBubbles server'),
      password: nonEmpty.describe("The BlueBubbles server's password."),
    })
    .optional()
    .describe('iMessage through BlueBubbles; `to` is a chat guid, or a phone number or email address.'),
  msteams: z
    .strictObject({
      ...channelCommon,
      appId: nonEmpty.describe("The bot's Microsoft app id."),
      appPassword: nonEmpty.describe("The bot's client secret."),
      tenantId: nonEmpty.optional().describe('Tenant the token is asked of. @default `botframework.com`'),
      serviceUrl: httpUrl.describe(
        "The Bot Framework service URL of the tenant's conversations (e.g. https://smba.trafficmanager.net/amer/).",
      ),
      tokenUrl: httpUrl
        .optional()
        .describe("Token endpoint. @default the tenant's Microsoft identity platform endpoint"),
    })
    .optional()
    .describe('Microsoft Teams through the Bot Framework; `to` is a conversation id.'),
});

/** The MCP Events endpoint: subscribers receive what the gateway accepted, from its durable log. */
const McpSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('Serve MCP at `path` and publish every accepted hook (and finished run) to the event log.'),
  path: z.string().default('/mcp').describe('Exact path of the Streamable HTTP endpoint.'),
  token: nonEmpty
    .optional()
    .describe('Bearer token of MCP clients; must differ from `hooks.token` and `gateway.auth.token`.'),
  allowLoopbackCallbacks: z
    .boolean()
    .default(false)
    .describe(
      'Callback URLs may be `http://` to a literal loopback address, and resolve to loopback (development only).',
    ),
  allowPrivateCallbacks: z
    .boolean()
    .default(false)
    .describe(
      'Callbacks may resolve to private ranges (RFC 1918, CGNAT, IPv6 ULA): a subscriber on the same network. ' +
        'Never link-local or metadata addresses.',
    ),
  maxSubscriptions: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(100)
    .describe('Webhook subscriptions held at once (not counting ended ones); more are refused.'),
});

/** `github.com`, `*.github.com` (hosts under it) or `*` (every host). */
const LINK_HOST = /^(?:\*|(?:\*\.)?[^\s/\\:?#@[\]*]+)$/u;

const DeliverySchema = z.strictObject({
  allowedLinkHosts: z
    .array(
      z
        .string()
        .refine(
          (h) => LINK_HOST.test(h) && (h === '*' || domainToASCII(h.replace(/^\*\./, '')) !== ''),
          'a host name such as "github.com", "*.github.com" for the hosts under it, or "*"',
        ),
    )
    .default([])
    .describe(
      'Hosts that links in replies may point to (`github.com`; `*.github.com` for the hosts under it; `*` for any). ' +
        'A link to any other host, and every link that is not http(s), is made inert (`hxxps://evil[.]example/…`); ' +
        'images are removed whatever their host. @default none: every link is made inert',
    ),
});

export const ConfigSchema = z.strictObject({
  $schema: z.string().optional().describe('A JSON Schema for editors; not read.'),
  gateway: GatewaySchema.prefault({}).describe("The listener, its limits and the gateway's own token."),
  logging: LoggingSchema.prefault({}).describe('What is logged besides `gateway.logLevel`: the access log.'),
  hooks: HooksSchema.prefault({}).describe('The webhook endpoints: token, mappings, limits and policy.'),
  agents: AgentsSchema.prefault({}).describe('The agents that runs and heartbeats are for.'),
  models: ModelsSchema.prefault({}).describe('Where model calls go.'),
  channels: ChannelsSchema.prefault({}).describe(
    "Chat services replies are delivered to; each block is one service's credentials.",
  ),
  store: StoreSchema.prefault({ driver: 'sqlite' }).describe('Where accepted work is kept.'),
  mcp: McpSchema.prefault({}).describe('The MCP endpoint: subscribers receive or poll the published occurrences.'),
  delivery: DeliverySchema.prefault({}).describe(
    "The guard on replies before they reach a chat service (the reply of every hook's run or heartbeat).",
  ),
  relay: RelaySchema.prefault({}).describe(
    'A relay on a public host: hook requests held for a home gateway behind NAT, which pulls them (docs/relay.md).',
  ),
  pull: PullSchema.optional().describe(
    'A home gateway: pull the requests a relay holds and process each through this door (docs/relay.md).',
  ),
});

export type Config = z.infer<typeof ConfigSchema>;
export type HooksConfig = z.infer<typeof HooksSchema>;
export type LoggingConfig = z.infer<typeof LoggingSchema>;
export type AgentsConfig = z.infer<typeof AgentsSchema>;
export type MappingConfig = z.infer<typeof MappingSchema>;
export type VerifyConfig = z.infer<typeof VerifySchema>;
export type StoreConfig = z.infer<typeof StoreSchema>;
export type RetentionConfig = z.infer<typeof RetentionSchema>;
export type BudgetConfig = z.infer<typeof MappingBudgetSchema>;
export type ChannelsConfig = z.infer<typeof ChannelsSchema>;
export type DeliveryConfig = z.infer<typeof DeliverySchema>;
export type AuthRateLimitConfig = z.infer<typeof AuthRateLimitSchema>;
export type McpConfig = z.infer<typeof McpSchema>;
