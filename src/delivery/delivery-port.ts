import type { NewDelivery } from '../store/index.js';

/** What the runtime hands over for delivery. */
interface DeliveryRequest {
  agentId: string;
  /** A channel name, or `last` (the main session's last route, resolved when sending). */
  channel: string;
  to: string | null;
  text: string;
  runId?: string;
}

/**
 * Where replies go. The runtime records each request as a `pending` delivery in the same
 * transaction as the turn that produced it (so a crash cannot lose it), then calls `deliver`
 * with the recorded delivery. An implementation sends it and records the outcome; pending
 * deliveries left by a crash are picked up again from the store.
 */
export interface DeliveryPort {
  deliver(delivery: NewDelivery): void;
}

/** Turns a request into the record the store keeps. */
export function toNewDelivery(request: DeliveryRequest, id: string, createdAt: number): NewDelivery {
  return {
    id,
    agentId: request.agentId,
    channel: request.channel,
    to: request.to,
    text: request.text,
    runId: request.runId ?? null,
    createdAt,
  };
}
