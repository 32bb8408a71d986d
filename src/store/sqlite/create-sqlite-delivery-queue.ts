import type { DeliveryQueue } from '../store.js';
import type { ClaimedDelivery } from '../types.js';
import { toDelivery, type DeliveryRow } from '../rows.js';
import type { SqliteContext } from './sqlite-context.js';
import { readHolds } from './prepare-statements.js';
import { holdsAll, pausedKeys, pausesSome } from '../dispatch-holds.js';

export function createSqliteDeliveryQueue({ st, write, now, emit, newClaimId }: SqliteContext): DeliveryQueue {
  return {
    async addDelivery(d) {
      await write(() => st.addDelivery(d));
      emit({ kind: 'deliveries' });
    },
    claimDueDeliveries({ owner, now: due, limit, leaseMs }) {
      return write(() => {
        const t = now();
        const claimed: ClaimedDelivery[] = [];
        const holds = readHolds(st);
        if (holdsAll(holds)) return claimed;
        const paused = pausedKeys(holds);
        const rows = pausesSome(holds)
          ? st.selectDueDeliveriesUnheld(limit).all({
              now: due,
              agents: JSON.stringify([...paused.agents.keys()]),
              hooks: JSON.stringify([...paused.hooks.keys()]),
            })
          : st.selectDueDeliveries(limit).all({ now: due });
        for (const row of rows as DeliveryRow[]) {
          if (row.lease_until !== null && row.lease_until >= t) continue;
          const claimId = newClaimId();
          if (st.leaseDelivery.run({ owner, until: t + leaseMs, claimId, id: row.id, now: t }).changes === 1) {
            claimed.push({ ...toDelivery(row), claimId });
          }
        }
        return claimed;
      });
    },
    renewDeliveries(claims, leaseMs) {
      return write(() => {
        const until = now() + leaseMs;
        return claims.filter((c) => st.renewDelivery.run(until, c.id, c.claimId).changes === 1).map((c) => c.id);
      });
    },
    recordDeliveryProgress(p) {
      return write(
        () =>
          st.progressDelivery.run(p.partsSent, p.resolvedChannel, p.resolvedTo, p.at, p.deliveryId, p.claimId)
            .changes === 1,
      );
    },
    async recordDeliveryAttempt(r) {
      const state = r.outcome === 'retry' ? 'pending' : r.outcome;
      const runId = await write(() => {
        const done = st.finishAttempt.run({
          id: r.deliveryId,
          claimId: r.claimId,
          state,
          error: r.error,
          at: r.at,
          resolvedChannel: r.resolvedChannel,
          resolvedTo: r.resolvedTo,
          partsSent: r.partsSent,
          nextAttemptAt: r.nextAttemptAt,
          sentAt: r.outcome === 'sent' ? r.at : null,
        });
        if (done.changes !== 1) return false;
        st.insertAttempt.run(r.deliveryId, r.attempt, r.at, r.status, r.error, r.outcome);
        if (r.lastRoute !== null) {
          const l = r.lastRoute;
          st.setLastRoute.run(l.sessionKey, l.agentId, l.channel, l.to, r.at, r.at);
        }
        return (st.selectDelivery.get(r.deliveryId) as DeliveryRow).run_id;
      });
      if (runId === false) return false;
      if (runId !== null && state !== 'pending') emit({ kind: 'finished', runId });
      return true;
    },
    async requeueDelivery(id, at) {
      const requeued = await write(() => st.requeueDelivery.run(at, at, id).changes === 1);
      if (requeued) emit({ kind: 'deliveries' });
      return requeued;
    },
    setLastRoute(sessionKey, agentId, channel, to, at) {
      return write(() => {
        st.setLastRoute.run(sessionKey, agentId, channel, to, at, at);
      });
    },
  };
}
