import type { IncomingHttpHeaders } from 'node:http';
import type { IngressStore } from '../store/index.js';

/**
 * One hook request as the request log follows it, from admission to answer. The pipeline holds it
 * beside the request's other state and hands it what it learns.
 */
export interface ObservedRequest {
  /** The request record's id. */
  readonly id: string;
  /** The body as read, once it is complete, and the headers it came with. */
  noteBody(raw: Buffer, headers: IncomingHttpHeaders): void;
  /** The error the request is being refused with. */
  noteError(error: unknown): void;
  /**
   * The store the hook handler should record this request's action through: it queues the
   * request's record as the action is queued.
   */
  ingress(): IngressStore;
  /** The response closed: `status` is what was answered, `null` when the client left first. */
  end(status: number | null): void;
}

/** Watches each hook request from admission to answer, for the request log. */
export interface RequestObserver {
  /** A request under the hooks path arrived (`path` without its query; `hook` the name after the prefix). */
  begin(request: { method: string; path: string; hook: string | null; client: string }): ObservedRequest;
}
