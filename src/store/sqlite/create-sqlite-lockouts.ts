import type { LockoutStore } from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

export function createSqliteLockouts({ st, write, now, emit }: SqliteContext): LockoutStore {
  return {
    async recordAuthFailure({ client, windowMs, maxFailures, lockoutMs }) {
      const lockedUntil = await write(() => {
        const t = now();
        const row = st.selectAuthFailures.get(client) as { failures: string; locked_until: number } | undefined;
        if (row !== undefined && row.locked_until > t) return { until: row.locked_until, fresh: false };
        const failures =
          row === undefined ? [] : (JSON.parse(row.failures) as number[]).filter((at) => at > t - windowMs);
        failures.push(t);
        const locked = failures.length >= maxFailures ? t + lockoutMs : 0;
        st.upsertAuthFailures.run({
          client,
          failures: JSON.stringify(locked > 0 ? [] : failures),
          lockedUntil: locked,
          now: t,
        });
        st.pruneAuthFailures.run({ horizon: t - windowMs });
        return { until: locked > 0 ? locked : null, fresh: locked > 0 };
      });
      if (lockedUntil.fresh && lockedUntil.until !== null)
        emit({ kind: 'lockout', client, lockedUntil: lockedUntil.until });
      return lockedUntil.until;
    },
    async listLockouts(limit) {
      const rows = st.selectLockouts.all(now(), limit) as Array<{ client: string; locked_until: number }>;
      return rows.map((r) => ({ client: r.client, lockedUntil: r.locked_until }));
    },
  };
}
