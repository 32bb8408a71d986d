import type { RunQueue } from '../store.js';
import type { ClaimedRun } from '../types.js';
import { toRun, type RunRow } from '../rows.js';
import { marksBehind, mergeCandidates, reopenedKeys } from '../held-keys.js';
import { hasBudgets, NO_BUDGETS } from '../run-budgets.js';
import { holdsAll, pausedKeys, pausesSome } from '../dispatch-holds.js';
import { readHolds } from './prepare-statements.js';
import { READY_BATCH } from '../ready-runs.js';
import { createSqliteBudgets } from './create-sqlite-budgets.js';
import type { SqliteContext } from './sqlite-context.js';
import { encodeSource } from '../action-source.js';

const claimed = (row: RunRow, claimId: string): ClaimedRun => ({ ...toRun(row), claimId });
type ClaimableRow = RunRow & { seq: number };
/** Blocked keys as the claim statements take them: a JSON array. */
const keys = (m: ReadonlyMap<string, string> | undefined): string =>
  JSON.stringify(m === undefined ? [] : [...m.keys()]);

/** Ready runs (see ready-runs.ts) a claim reads in `seq` order before it looks further; and the most sessions it looks at one by one. */
const CLAIM_SCAN = 1000;

export function createSqliteRunQueue(
  { db, st, write, now, emit, newClaimId }: SqliteContext,
  markBatch?: number,
  scan = CLAIM_SCAN,
): RunQueue {
  const budgeting = createSqliteBudgets(db, markBatch);
  return {
    async claimRuns({ owner, limit, leaseMs, budgets }) {
      let behind = false;
      const claimedRuns = await write(() => {
        const t = now();
        const runs: ClaimedRun[] = [];
        const claim = (row: RunRow): void => {
          const claimId = newClaimId();
          if (st.claimRun.run({ now: t, owner, until: t + leaseMs, claimId, id: row.id }).changes !== 1) return;
          runs.push(
            claimed(
              {
                ...row,
                state: 'running',
                attempts: row.attempts + 1,
                started_at: row.started_at ?? t,
                lease_owner: owner,
                lease_until: t + leaseMs,
                held_reason: null,
              },
              claimId,
            ),
          );
        };
        // Everything held (a pause of all, a drain): nothing is claimed, nothing marked.
        const holds = readHolds(st);
        if (holdsAll(holds)) return runs;
        if (st.anyDue.get({ now: t }) !== undefined) st.letInDue(READY_BATCH).run({ now: t });
        const plan =
          hasBudgets(budgets) || pausesSome(holds) ? budgeting.plan(budgets ?? NO_BUDGETS, t, pausedKeys(holds)) : null;
        const held = budgeting.heldKeys();
        // A run whose start uses up its key's room blocks that key's later runs: select again
        // without them. Each pass blocks a key or ends the loop (at once without budgets).
        for (;;) {
          const left = limit - runs.length;
          const params = {
            now: t,
            agents: keys(plan?.blocked.agents),
            hooks: keys(plan?.blocked.hooks),
            restartAgents: keys(plan?.blockedRestarts.agents),
            restartHooks: keys(plan?.blockedRestarts.hooks),
          };
          let first = (
            plan === null ? st.selectClaimableUnbudgeted(left, scan).all() : st.selectClaimable(left, scan).all(params)
          ) as ClaimableRow[];
          if (first.length < left && st.moreClaimable.get({ scan }) !== undefined) {
            // Few sessions (a flood queued behind one of them): their oldest runs; many: everything,
            // unless held runs are still being marked (see marksBehind).
            const sessions = st
              .openSessions(scan + 1)
              .pluck()
              .all() as string[];
            if (sessions.length <= scan)
              first = st.selectSessionHeads(left).all({ ...params, keys: JSON.stringify(sessions) }) as ClaimableRow[];
            else if (!marksBehind(held, plan)) first = st.selectClaimableAll(left).all(params) as ClaimableRow[];
          }
          const lists = [first];
          const reopened = reopenedKeys(held, plan);
          for (const scope of ['agents', 'hooks'] as const) {
            for (const key of reopened[scope])
              lists.push(st.selectReopened[scope](left).all({ ...params, key }) as ClaimableRow[]);
          }
          let skipped = false;
          for (const row of mergeCandidates(lists, left)) {
            if (plan === null || plan.take(row.agent_id, row.hook, row.started_at !== null)) claim(row);
            else skipped = true;
          }
          if (!skipped || runs.length >= limit) break;
        }
        // Without budgets, marks an earlier configuration left are cleared, a batch a claim.
        if (plan !== null || held.length > 0) behind = marksBehind(budgeting.mark(plan, held), plan);
        return runs;
      });
      if (behind) emit({ kind: 'runs' });
      return claimedRuns;
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
      const source = encodeSource(c.summary.source);
      const done = await write(() => {
        if (
          st.finishRun.run(c.state, c.finishedAt, c.model, c.reply, c.error, c.tokens ?? null, c.runId, c.claimId)
            .changes !== 1
        )
          return false;
        st.addTranscript(c.summary.agentId, c.transcript, c.finishedAt);
        st.addEvent(c.summary, source);
        if (c.delivery !== null) st.addDelivery(c.delivery);
        st.addLogEvents([c.published]);
        return true;
      });
      if (done) {
        if (c.published !== undefined) emit({ kind: 'published' });
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
