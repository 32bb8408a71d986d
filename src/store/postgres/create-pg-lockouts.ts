import type { LockoutStore } from '../store.js';
import { notify, nowSql, type PgContext } from './pg-context.js';

export function createPgLockouts(ctx: PgContext): LockoutStore {
  return {
    async recordAuthFailure({ client, windowMs, maxFailures, lockoutMs }) {
      return ctx.tx(async (c) => {
        const { rows } = await c.query(`SELECT ${nowSql(1)} AS now`, [ctx.clockParam()]);
        const now = Number((rows[0] as { now: number }).now);
        await c.query('INSERT INTO auth_failures (client, failures, updated_at) VALUES ($1, $2, $3) ON CONFLICT (client) DO NOTHING', [client, [], now]);
        const cur = (await c.query('SELECT failures, locked_until FROM auth_failures WHERE client = $1 FOR UPDATE', [client])).rows[0] as
          { failures: number[]; locked_until: number };
        if (cur.locked_until > now) return cur.locked_until;
        const failures = cur.failures.map(Number).filter((at) => at > now - windowMs);
        failures.push(now);
        const lockedUntil = failures.length >= maxFailures ? now + lockoutMs : 0;
        await c.query('UPDATE auth_failures SET failures = $2, locked_until = $3, updated_at = $4 WHERE client = $1',
          [client, lockedUntil > 0 ? [] : failures, lockedUntil, now]);
        if (lockedUntil === 0) return null;
        await notify(c, ctx.channel, [{ kind: 'lockout', client, lockedUntil }]);
        return lockedUntil;
      });
    },
    async listLockouts() {
      const param = ctx.clockParam();
      // Rows neither locked nor touched for a day go, so the table stays bounded.
      if (ctx.writable) {
        await ctx.pool.query(`DELETE FROM auth_failures WHERE locked_until <= ${nowSql(1)} AND updated_at < ${nowSql(1)} - 86400000`, [param]);
      }
      const { rows } = await ctx.pool.query(
        `SELECT client, locked_until FROM auth_failures WHERE locked_until > ${nowSql(1)} ORDER BY client`,
        [param],
      );
      return (rows as Array<{ client: string; locked_until: number }>).map((r) => ({ client: r.client, lockedUntil: Number(r.locked_until) }));
    },
  };
}
