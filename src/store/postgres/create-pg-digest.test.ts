import { describe, it, afterEach, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  createStoreFixture,
  POSTGRES_URL,
  postgresUnavailable,
  type StoreFixture,
} from '../../../test/helpers/store-fixture.js';
import { MAIN, newEvent, turn } from '../../../test/helpers/store-records.js';

/** A digest taken while another replica's commit of older-numbered events is still in flight. */
describe('PostgreSQL backlog digests under concurrent writers', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: PostgreSQL backlog digests: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  let f: StoreFixture;
  let writer: pg.Client;
  beforeEach(async () => {
    f = await createStoreFixture('postgres');
    writer = new pg.Client({ connectionString: POSTGRES_URL });
    await writer.connect();
    await writer.query(`SET search_path TO ${(f.config as { schema: string }).schema}`);
  });
  afterEach(async () => {
    await writer.end();
    await f.dispose();
  });

  it('counts the events of a commit in flight when it was taken, so the turn that consumes them is not refused', async () => {
    // The other replica's event draws its number first and commits last.
    await writer.query('BEGIN');
    await writer.query(
      `INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at)
        VALUES ('in-flight', 'main', $1, 'committed late', 'next-heartbeat', '{"hook":"ci","external":true}', 1)`,
      [MAIN],
    );
    await f.store.recordActions({
      events: Array.from({ length: 60 }, (_, i) => newEvent(`Build ${i} failed`)),
      runs: [],
      idempotency: null,
    });
    const digesting = f.store.digestPending(MAIN, { groups: 3, hooks: 50, newest: 3, high: 20 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await writer.query('COMMIT');
    const d = (await digesting)!;
    assert.equal(d.total, 61, 'the digest waited for the commit in flight');
    const c = (await f.store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 60_000 }))!;
    assert.equal(
      await f.store.recordHeartbeatTurn({
        claimId: c.claimId,
        sessionKey: MAIN,
        agentId: 'main',
        consumedEventIds: [],
        consumeThrough: { eventId: d.throughId, count: d.total },
        transcript: turn(MAIN, 'digest'),
        delivery: null,
        at: 9,
      }),
      true,
    );
    assert.deepEqual(await f.store.listPendingEvents(MAIN), []);
  });
});
