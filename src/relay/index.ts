/**
 * The pull relay (docs/relay.md): on a public host, a relay's door that holds each request as
 * received and its pull API; at home, the loop that leases them and passes each through this
 * gateway's own door, acknowledging only after its commit.
 */
export { createRelayDoor } from './create-relay-door.js';
export type { RelayDoorDeps } from './create-relay-door.js';
export { createRelayApi } from './create-relay-api.js';
export type { RelayApi, RelayApiObserver } from './create-relay-api.js';
export { createRelayPruner } from './create-relay-pruner.js';
export type { RelayPruner } from './create-relay-pruner.js';
export { createRelayClient, RelayCallError } from './create-relay-client.js';
export type { RelayClient } from './create-relay-client.js';
export { passRelayedRequest } from './pass-relayed-request.js';
export type { RelayedResult } from './pass-relayed-request.js';
export { createPuller } from './create-puller.js';
export type { PullObserver, Puller, PullStatus } from './create-puller.js';
export { createRelay } from './create-relay.js';
export type { Relay, RelayObserver } from './create-relay.js';
export { createHomePull } from './create-home-pull.js';
