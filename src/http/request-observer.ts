import type { ServerResponse } from 'node:http';
import type { IngressStore } from '../store/index.js';

/**
 * Watches each hook request from admission to answer, for the request log. Keyed by the
 * response, so the pipeline passes nothing around but what it already holds.
 */
export interface RequestObserver {
  /** A request under the hooks path arrived (`path` without its query; `hook` the name after the prefix). */
  begin(res: ServerResponse, request: { method: string; path: string; hook: string | null; client: string }): void;
  /** The body as read, once it is complete. */
  noteBody(res: ServerResponse, raw: Buffer): void;
  /** The error the request is being refused with. */
  noteError(res: ServerResponse, error: unknown): void;
  /**
   * The store the hook handler should record this request's action through: it queues the
   * request's record in the same commit as the action.
   */
  ingress(res: ServerResponse): IngressStore | undefined;
}
