import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { RetentionSchema } from '../../config/index.js';
import { createStoreFixture, POSTGRES_URL, postgresUnavailable } from '../../../test/helpers/store-fixture.js';
import { newDelivery } from '../../../test/helpers/store-records.js';
import { pruneCutoffs } from '../create-pruner.js';
import type { Store } from '../store.js';

const DAY = 86_400_000;

/** A delivery claimed and given one attempt with `outcome`, at `at`; its id. */
async function attempted(store: Store, outcome: 'sent' | 'failed', at: number): Promise<string> {
  await store.addDelivery(newDelivery({ createdAt: at }));
  const [d] = await store.claimDueDeliveries({ owner: 'w', limit: 1, leaseMs: 60_000, now: at });
  await store.recordDeliveryAttempt({
    claimId: d!.claimId,
    deliveryId: d!.id,
    attempt: 1,
    at,
    status: outcome === 'sent' ? 200 : 500,
    error: outcome === 'sent' ? null : 'boom',
    outcome,
    resolvedChannel: 'telegram',
    resolvedTo: '42',
    partsSent: outcome === 'sent' ? 1 : 0,
    nextAttemptAt: null,
    lastRoute: null,
  });
  return d!.id;
}

describe('PostgreSQL retention', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: PostgreSQL retention: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }

  it('keeps the attempts of an ended delivery that is being requeued while a batch deletes the others', async () => {
    const f = await createStoreFixture('postgres');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const schema = f.config.driver === 'postgres' ? f.config.schema : '';
      const t = f.clock.now();
      const requeued = await attempted(f.store, 'failed', t);
      const sent = await attempted(f.store, 'sent', t);
      await f.clock.advance(31 * DAY);
      // An operator's retry (`hookgate retry`, the admin API), its UPDATE not yet committed while the batch runs.
      await client.query('BEGIN');
      const { rowCount } = await client.query(
        `UPDATE ${schema}.deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, error = NULL, updated_at = $1,
          lease_owner = NULL, lease_until = NULL, claim_id = NULL WHERE id = $2 AND state IN ('failed', 'skipped')`,
        [f.clock.now(), requeued],
      );
      assert.equal(rowCount, 1);
      const pruned = await f.store.prune(pruneCutoffs(RetentionSchema.parse({}), f.clock.now()), 100);
      await client.query('COMMIT');
      assert.equal(pruned.deliveries, 1, 'the sent delivery went');
      assert.equal(await f.store.getDelivery(sent), null);
      const left = await client.query(`SELECT delivery_id FROM ${schema}.delivery_attempts ORDER BY seq`);
      assert.deepEqual(
        left.rows.map((r: { delivery_id: string }) => r.delivery_id),
        [requeued],
        'with its attempt, and only it',
      );
      const kept = await f.store.getDelivery(requeued);
      assert.equal(kept?.state, 'pending');
      assert.deepEqual(
        kept?.attemptLog.map((a) => a.outcome),
        ['failed'],
        'the requeued delivery keeps its history',
      );
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
      await f.dispose();
    }
  });
});
