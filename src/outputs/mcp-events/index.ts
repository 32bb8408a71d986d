/**
 * MCP Events (SEP-3415, `io.modelcontextprotocol/events`) over the event log: a Streamable HTTP
 * JSON-RPC endpoint (discover/initialize, events/list, poll, subscribe, unsubscribe) and the
 * webhook sender, a consumer of the log with a durable position per subscription.
 */
import type { Clock } from '../../common/clock.js';
import type { Log } from '../../common/log.js';
import type { McpConfig } from '../../config/index.js';
import type { EventLog, SubscriptionStore, WorkSignals } from '../../store/index.js';
import { createMcpMethods } from './create-mcp-methods.js';
import { createSender, type Sender } from './create-sender.js';
import { createWebhookClient } from './create-webhook-client.js';
import { createThreadedWebhookClient } from './create-threaded-webhook-client.js';
import { createMcpHttpHandler, type McpHttpAnswer, type McpHttpCall } from './handle-mcp-http.js';
import type { SenderObserver } from './send-subscription.js';

interface McpEventsDeps {
  config: McpConfig;
  store: EventLog & SubscriptionStore & WorkSignals;
  /** Ids of the mappings in force (`events/list` names one event per mapping). */
  mappingIds: () => readonly string[];
  clock: Clock;
  log: Log;
  /** This process, for operators (`pid:uuid`). */
  owner: string;
  /** A subscription claim's lease. */
  leaseMs: number;
  /** Hookgate's version, for `serverInfo`. */
  version: string;
  observer?: SenderObserver;
  /** Resolves callback hostnames (tests). @default dns.lookup */
  lookup?: Parameters<typeof createWebhookClient>[0]['lookup'];
  /** Sender tuning (tests). */
  send?: Parameters<typeof createSender>[0]['send'];
  /** How often the sender looks for subscriptions nobody announced (tests). @default 1000 */
  pollMs?: number;
  /** Definitions per `events/list` page (tests). @default 50 */
  pageSize?: number;
  /** The shortest subscription lifetime granted (tests). @default 60000 */
  minTtlMs?: number;
}

export interface McpEvents {
  /** The endpoint's core: a request as plain values in, the answer out. */
  handle(call: McpHttpCall): Promise<McpHttpAnswer>;
  sender: Sender;
  /** Closes the callback client's connections (after the sender stopped). */
  close(): void;
}

/**
 * Builds the MCP Events endpoint and its webhook sender over the store. `mcp.allowLoopbackCallbacks`
 * and `mcp.allowPrivateCallbacks` decide which refused ranges callbacks may reach.
 * @default every loopback, private, link-local, metadata and reserved address refused
 */
export function createMcpEvents(deps: McpEventsDeps): McpEvents {
  const allow = { loopback: deps.config.allowLoopbackCallbacks, private: deps.config.allowPrivateCallbacks };
  // Callback HTTP runs on a thread of its own unless a test resolves names in this one.
  const client =
    deps.lookup === undefined
      ? createThreadedWebhookClient({ allow })
      : createWebhookClient({ allow, lookup: deps.lookup });
  const sender = createSender({
    store: deps.store,
    client,
    clock: deps.clock,
    log: deps.log,
    owner: deps.owner,
    leaseMs: deps.leaseMs,
    concurrency: deps.config.maxSubscriptions,
    ...(deps.observer === undefined ? {} : { observer: deps.observer }),
    ...(deps.send === undefined ? {} : { send: deps.send }),
    ...(deps.pollMs === undefined ? {} : { pollMs: deps.pollMs }),
  });
  const methods = createMcpMethods({
    store: deps.store,
    mappingIds: deps.mappingIds,
    client,
    allow,
    maxSubscriptions: deps.config.maxSubscriptions,
    clock: deps.clock,
    version: deps.version,
    ...(deps.pageSize === undefined ? {} : { pageSize: deps.pageSize }),
    ...(deps.minTtlMs === undefined ? {} : { minTtlMs: deps.minTtlMs }),
  });
  const handle = createMcpHttpHandler(methods, (method, error) =>
    deps.log.error('MCP method failed', { method, err: error }),
  );
  return { handle, sender, close: () => client.close() };
}
