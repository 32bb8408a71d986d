/**
 * An MCP Events subscriber built on the AI SDK's own client and webhook handler: `createMCPClient`
 * with `experimental_events.store`, and `experimental_createMCPEventWebhook` mounted on a loopback
 * `node:http` server. It records every event, gap and termination it accepted, and can be taken
 * down (it answers 503, as a subscriber does while it cannot accept) and brought back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent as MCPEvent,
  type Experimental_MCPEventStore as MCPEventStore,
  type Experimental_MCPEventSubscription as MCPEventSubscription,
} from '@ai-sdk/mcp';

/** A durable-enough subscription store for tests: a map, merged field by field as the SDK asks. */
export function createMemoryEventStore(): MCPEventStore & { all(): MCPEventSubscription[] } {
  const byKey = new Map<string, MCPEventSubscription>();
  return {
    get: async (key) => byKey.get(key),
    getById: async (id) => [...byKey.values()].find((s) => s.id === id),
    set: async (s) => void byKey.set(s.key, structuredClone(s)),
    update: async (key, patch) => {
      const s = byKey.get(key);
      if (s !== undefined) byKey.set(key, { ...s, ...patch });
    },
    delete: async (key) => void byKey.delete(key),
    all: () => [...byKey.values()],
  };
}

export interface ReceivedEvent {
  subscriptionId: string;
  event: MCPEvent;
}

export interface McpSubscriber {
  /** `http://127.0.0.1:<port>/hook`. */
  url: string;
  store: ReturnType<typeof createMemoryEventStore>;
  events: ReceivedEvent[];
  gaps: Array<{ subscriptionId: string; cursor: string }>;
  terminations: Array<{ subscriptionId: string; code: number; reason: unknown }>;
  /** Requests the server got, by status answered. */
  answered: Map<number, number>;
  /** While down, every request is answered with this status (503 by default). */
  down(status?: number): void;
  up(): void;
  /** Waits until `events` holds `n` (or `pred` holds). */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  return new Request(new URL(req.url ?? '/', base), {
    method: req.method ?? 'POST',
    headers,
    ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
  });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  res.writeHead(response.status, headers);
  res.end(body);
}

export async function startMcpSubscriber(): Promise<McpSubscriber> {
  const store = createMemoryEventStore();
  const events: ReceivedEvent[] = [];
  const gaps: McpSubscriber['gaps'] = [];
  const terminations: McpSubscriber['terminations'] = [];
  const answered = new Map<number, number>();
  let downStatus: number | null = null;
  const webhook = createMCPEventWebhook({
    store,
    onEvent: async ({ subscription, event }) => void events.push({ subscriptionId: subscription.id, event }),
    onGap: async ({ subscription, gap }) => void gaps.push({ subscriptionId: subscription.id, cursor: gap.cursor }),
    onTerminated: async ({ subscription, termination }) =>
      void terminations.push({
        subscriptionId: subscription.id,
        code: termination.error.code,
        reason: (termination.error.data as { reason?: unknown } | null | undefined)?.reason,
      }),
  });
  let base = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      let status: number;
      if (downStatus !== null) {
        req.resume();
        status = downStatus;
        res.writeHead(status);
        res.end();
      } else {
        const response = await webhook(await toRequest(req, base));
        status = response.status;
        await writeResponse(res, response);
      }
      answered.set(status, (answered.get(status) ?? 0) + 1);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/hook`,
    store,
    events,
    gaps,
    terminations,
    answered,
    down(status = 503) {
      downStatus = status;
    },
    up() {
      downStatus = null;
    },
    async waitFor(pred, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > until) throw new Error('timed out waiting for the subscriber');
        await sleep(10);
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The AI SDK's MCP client on Hookgate's endpoint, with a subscriber's store. */
export function connectMcpClient(url: string, token: string, store: MCPEventStore) {
  return createMCPClient({
    transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
    experimental_events: { store },
  });
}
