import type { RequestHandler } from './create-request-handler.js';
import { refuseUnlessGetOrHead, sendJson } from './send-response.js';

/** What a readiness check says: ready, or the code and reason it is not. */
type ReadinessAnswer = { ok: true } | { ok: false; code: string; reason: string };

/**
 * `GET /readyz`: 200 `{ok:true}` when the gateway can take work now, else 503
 * `{ok:false, code, reason}`. No auth, like `/healthz`: it says nothing a load balancer must not know.
 */
export function createReadinessRoute(check: () => Promise<ReadinessAnswer>): RequestHandler {
  return (req, res) => {
    req.resume();
    if (refuseUnlessGetOrHead(req, res)) return;
    check().then(
      (answer) => sendJson(res, answer.ok ? 200 : 503, JSON.stringify(answer), { 'cache-control': 'no-store' }),
      (error: unknown) =>
        sendJson(
          res,
          503,
          JSON.stringify({ ok: false, code: 'internal_error', reason: String((error as Error)?.message ?? error) }),
          { 'cache-control': 'no-store' },
        ),
    );
  };
}
