/**
 * The webhook client's thread: callback HTTP (connections, TLS, signatures' bytes on the wire,
 * answers) runs here, beside the serving thread, so a fan-out to many subscribers does not take
 * the event loop the ingress answers on. Messages: `{id, post}` (a `WebhookPost` without its
 * signal) answered `{id, result}`, and `{id, abort: true}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AddressAllowance } from './address-policy.js';
import { createWebhookClient, type WebhookPost, type WebhookResult } from './create-webhook-client.js';

export type WorkerRequest = { id: number; post: Omit<WebhookPost, 'signal'> } | { id: number; abort: true };

export type WorkerResult =
  | Extract<WebhookResult, { kind: 'answered' }>
  | { kind: 'failed'; reason: Extract<WebhookResult, { kind: 'failed' }>['reason']; message: string; address?: string };

export interface WorkerAnswer {
  id: number;
  result: WorkerResult;
}

const port = parentPort;
if (port === null) throw new Error('webhook-worker runs as a worker thread');
const client = createWebhookClient({ allow: (workerData as { allow: AddressAllowance }).allow });
const inFlight = new Map<number, AbortController>();

port.on('message', (m: WorkerRequest) => {
  if ('abort' in m) {
    inFlight.get(m.id)?.abort(new Error('aborted'));
    return;
  }
  const abort = new AbortController();
  inFlight.set(m.id, abort);
  void client.post({ ...m.post, signal: abort.signal }).then((r) => {
    inFlight.delete(m.id);
    const address = r.kind === 'failed' ? (r.error as { address?: unknown }).address : undefined;
    const result: WorkerResult =
      r.kind === 'answered'
        ? r
        : {
            kind: 'failed',
            reason: r.reason,
            message: r.error.message,
            ...(typeof address === 'string' ? { address } : {}),
          };
    port.postMessage({ id: m.id, result } satisfies WorkerAnswer);
  });
});
