/** HTTP edge: routing, body limits, client address, error responses, the `node:http` binding. */
export { createRequestHandler } from './create-request-handler.js';
export type { IngressSettings, RelayDoor, RequestHandler } from './create-request-handler.js';
export { parseHookCall } from './parse-hook-call.js';
/** The access line of each hook request, as `logging` says (all, refusals, off; sampled; shed requests throttled). */
export { createAccessLog } from './access-log.js';
export { createHttpServer } from './create-http-server.js';
export type { HttpServer } from './create-http-server.js';
export { createClientAddressResolver } from './resolve-client-address.js';
export { addressGroup, createPeerGrouper } from './create-peer-grouper.js';
export type { ObservedRequest, RequestObserver } from './request-observer.js';
export { sendError, sendJson } from './send-response.js';
export { createMetricsRoute } from './create-metrics-route.js';
export { createMcpRoute } from './create-mcp-route.js';
export { createRelayRoute } from './create-relay-route.js';
export type { RelayRouteCall } from './create-relay-route.js';
export { createReadinessRoute } from './create-readiness-route.js';
