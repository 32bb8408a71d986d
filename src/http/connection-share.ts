/**
 * How many connections one client (an address; an IPv6 /64) may hold: half of the slots not held
 * by the other clients, at least 1, and at most `maxPerClient` when that is set. The share follows
 * the free slots, so clients past the first always leave room: alone, a client may take half the
 * gateway; four addresses, which filled it under a fixed quarter each, now leave a sixteenth free.
 * A client that may take none at all is never refused for its share (at capacity the gateway makes
 * room by closing an idle connection).
 */
export function connectionShare(o: {
  /** Connections the client holds now. */
  held: number;
  /** Connections let in now, the client's among them. */
  open: number;
  maxConnections: number;
  /** `gateway.maxConnectionsPerClient`, when set. */
  maxPerClient?: number | undefined;
}): number {
  const adaptive = Math.max(1, Math.ceil((o.maxConnections - o.open + o.held) / 2));
  return o.maxPerClient === undefined ? adaptive : Math.min(o.maxPerClient, adaptive);
}
