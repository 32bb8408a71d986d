import type { AuthLimiter } from './create-auth-limiter.js';

/**
 * A limiter that counts a client's failures and lockout under the group its address belongs to
 * (`group`), so one sender cannot step around the lockout by trying from each address of a block
 * it holds (an IPv6 /64). The group is what the limiter, and a shared store's lockout rows, see.
 */
export function groupAuthLimiter(limiter: AuthLimiter, group: (client: string) => string): AuthLimiter {
  return {
    check: (client, nowMs) => limiter.check(group(client), nowMs),
    recordFailure: (client, nowMs) => limiter.recordFailure(group(client), nowMs),
    size: () => limiter.size(),
  };
}
