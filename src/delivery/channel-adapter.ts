import { HookgateError } from '../common/errors.js';

/**
 * One chat service. `send` posts one message (already split to fit) to `to`, honouring
 * `signal` (the per-call timeout), and throws a `DeliveryError` on failure.
 */
export interface ChannelAdapter {
  readonly name: string;
  /** Longest message the service accepts, in characters (UTF-16 code units). */
  readonly maxMessageChars: number;
  send(to: string, text: string, signal: AbortSignal): Promise<void>;
}

/**
 * A failed send. `retryable` for network errors, 429 and 5xx; `retryAfterMs` carries the
 * service's hint (the `Retry-After` header or the body field the API uses for it).
 */
export class DeliveryError extends HookgateError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    options: { status?: number; retryable: boolean; retryAfterMs?: number; cause?: unknown },
  ) {
    super('delivery_failed', message, { cause: options.cause });
    this.name = 'DeliveryError';
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Whether an HTTP status is worth retrying: 408, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
