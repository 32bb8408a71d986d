import type { RunQueue } from '../store.js';
import type { ClaimedRun } from '../types.js';
import { toRun, type RunRow } from '../rows.js';
import type { SqliteContext } from './sqlite-context.js';

const claimed = (row: RunRow, claimId: string): ClaimedRun => ({ ...toRun(row), claimId });

export function createSqliteRunQueue({ st, write, now, emit, newClaimId }: SqliteContext): RunQueue {
  return {
    claimRuns({ owner, limit, leaseMs }) {
      return write(() => {
        const t = now();
        const runs: ClaimedRun[] = [];
        for (const row of st.selectClaimable.all({ now: t, limit }) as RunRow[]) {
          const claimId = newClaimId();
          if (st.claimRun.run({ now: t, owner, until: t + leaseMs, claimId, id: row.id }).changes !== 1) continue;
          runs.push(claimed({ ...row, state: 'running', attempts: row.attempts + 1, started_at: row.started_at ?? t,
            lease_owner: owner, lease_until: t + leaseMs }, claimId));
        }
        return runs;
      });
    },
    renewRuns(claims, leaseMs) {
      return write(() => {
        const until = now() + leaseMs;
        return claims.filter((c) => st.renewRun.run(until, c.id, c.claimId).changes === 1).map((c) => c.id);
      });
    },
    async releaseRun(claim) {
      const released = await write(() => st.releaseRun.run(claim.id, claim.claimId).changes === 1);
      if (released) emit({ kind: 'runs' });
      return released;
    },
    async completeRun(c) {
      const source = JSON.stringify(c.summary.source);
      const done = await write(() => {
        if (st.finishRun.run(c.state, c.finishedAt, c.model, c.reply, c.error, c.runId, c.claimId).changes !== 1) return false;
        st.addTranscript(c.summary.agentId, c.transcript, c.finishedAt);
        st.addEvent(c.summary, source);
        if (c.delivery !== null) st.addDelivery(c.delivery);
        return true;
      });
      if (done) {
        // A finished run may unblock the next run of its session.
        emit({ kind: 'runs' });
        emit({ kind: 'finished', runId: c.runId });
        if (c.delivery !== null) emit({ kind: 'deliveries' });
        if (c.summary.mode === 'now') emit({ kind: 'heartbeat', agentId: c.summary.agentId });
      }
      return done;
    },
    async recoverExpiredRuns({ owner, maxAttempts, leaseMs }) {
      const result = await write(() => {
        const t = now();
        const r = { requeued: [] as string[], abandoned: [] as ClaimedRun[] };
        for (const row of st.selectExpired.all(t) as RunRow[]) {
          if (row.attempts < maxAttempts) {
            st.requeueRun.run(row.id);
            r.requeued.push(row.id);
            continue;
          }
          const claimId = newClaimId();
          st.reclaimRun.run({ owner, until: t + leaseMs, claimId, id: row.id });
          r.abandoned.push(claimed({ ...row, lease_owner: owner, lease_until: t + leaseMs }, claimId));
        }
        return r;
      });
      if (result.requeued.length > 0) emit({ kind: 'runs' });
      return result;
    },
  };
}
