import { SPEND_KEPT_MS } from '../run-budgets.js';
import type { HeartbeatQueue } from '../store.js';
import type { ConsumedMarker } from './consumed-marks.js';
import { StaleClaim, type SqliteContext } from './sqlite-context.js';
import { readHolds } from './prepare-statements.js';
import { coveringHold } from '../dispatch-holds.js';

export function createSqliteHeartbeats(
  { db, st, write, now, emit, newClaimId }: SqliteContext,
  marker: ConsumedMarker,
): HeartbeatQueue {
  const recordTurn = db.transaction((t: Parameters<HeartbeatQueue['recordHeartbeatTurn']>[0]) => {
    if (st.holdsHeartbeat.get(t.agentId, t.claimId) === undefined) throw new StaleClaim();
    const turnId = t.transcript[0]?.turnId ?? null;
    const through = t.consumeThrough ?? null;
    // Counted before the listed events are: `count` takes them in.
    const seq = through === null ? undefined : (st.eventSeq.get(through.eventId) as { seq: number } | undefined)?.seq;
    if (
      through !== null &&
      (seq === undefined ||
        (st.countPendingThrough.get({ key: t.sessionKey, seq }) as { n: number }).n !== through.count)
    ) {
      throw new StaleClaim();
    }
    for (const id of t.consumedEventIds) {
      // An event another turn already consumed means this turn is a twin: write nothing.
      if (st.consumeEvent.run(t.at, turnId, id).changes !== 1) throw new StaleClaim();
    }
    if (through !== null && seq !== undefined) {
      // The backlog is consumed by one mark, stamped on its events afterwards (consumed-marks.ts).
      const kinds = through.kinds;
      const filtered = kinds === undefined ? 0 : 1;
      const mark = st.addConsumedMark.run({ key: t.sessionKey, seq, turnId, at: t.at, filtered });
      for (const kind of kinds ?? []) {
        st.addConsumedMarkKind.run({
          markId: mark.lastInsertRowid,
          key: t.sessionKey,
          seq,
          hook: kind.hook,
          shape: kind.shape,
        });
      }
    }
    st.addTranscript(t.agentId, t.transcript, t.at);
    if (t.delivery !== null) st.addDelivery(t.delivery);
    if (t.tokens !== undefined && t.tokens !== null && t.tokens > 0) {
      st.pruneHeartbeatSpend.run({ agentId: t.agentId, before: t.at - SPEND_KEPT_MS });
      st.addHeartbeatSpend.run({ agentId: t.agentId, at: t.at, tokens: t.tokens });
    }
    st.noteHeartbeatTurn.run(t.agentId, now());
  });

  return {
    claimHeartbeat({ agentId, owner, leaseMs, minIntervalMs }) {
      return write(() => {
        const t = now();
        // A held agent takes no turn: its events wait, and its runtime asks again once it is resumed.
        if (coveringHold(readHolds(st), agentId, null) !== undefined) return null;
        if (minIntervalMs !== undefined && st.recentHeartbeatTurn.get(agentId, t - minIntervalMs) !== undefined)
          return null;
        const claimId = newClaimId();
        const taken = st.claimHeartbeat.run({ agentId, claimId, owner, until: t + leaseMs, now: t }).changes === 1;
        return taken ? { agentId, claimId } : null;
      });
    },
    renewHeartbeat(claim, leaseMs) {
      return write(() => st.renewHeartbeat.run(now() + leaseMs, claim.agentId, claim.claimId).changes === 1);
    },
    releaseHeartbeat(claim) {
      return write(() => {
        st.releaseHeartbeat.run(claim.agentId, claim.claimId);
      });
    },
    async recordHeartbeatTurn(t) {
      const recorded = await write(() => {
        try {
          recordTurn(t);
          return true;
        } catch (error) {
          if (error instanceof StaleClaim) return false;
          throw error;
        }
      });
      if (recorded && t.consumeThrough) marker.kick();
      if (recorded && t.delivery !== null) emit({ kind: 'deliveries' });
      return recorded;
    },
    recoverExpiredHeartbeats() {
      return write(() => {
        const t = now();
        const agents = (st.selectExpiredHeartbeats.all(t) as Array<{ agent_id: string }>).map((r) => r.agent_id);
        for (const agentId of agents) st.deleteHeartbeat.run(agentId, t);
        return agents;
      });
    },
  };
}
