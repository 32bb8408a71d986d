/**
 * The pull relay (docs/relay.md): on a public host, a relay's door that holds each request as
 * received and its pull API; at home, the loop that leases them and passes each through this
 * gateway's own door, acknowledging only after its commit.
 */
export { createRelay } from './create-relay.js';
export type { Relay } from './create-relay.js';
export { createHomePull } from './create-home-pull.js';
export type { Puller } from './create-puller.js';
