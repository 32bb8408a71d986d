import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { dropSchema, POSTGRES_URL, postgresUnavailable } from '../../../test/helpers/store-fixture.js';
import { newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { WorkSignal } from '../types.js';
import { createPostgresStore } from './create-postgres-store.js';
import { channelFor, decodeSignal, encodeSignal } from './pg-context.js';

describe('channelFor', () => {
  it('names the channel after the schema', () => {
    assert.equal(channelFor('hookgate'), 'hg_hookgate');
  });

  it('keeps a channel within the 63 bytes pg_notify accepts, one per schema, however long the schema name', () => {
    const a = `${'x'.repeat(50)}_${'a'.repeat(12)}`;
    const b = `${'x'.repeat(50)}_${'b'.repeat(12)}`;
    assert.equal(a.length, 63);
    assert.ok(channelFor(a).length <= 63, channelFor(a));
    assert.notEqual(channelFor(a), channelFor(b));
    assert.equal(channelFor(`hg_${'y'.repeat(57)}`), `hg_hg_${'y'.repeat(57)}`, 'exactly 63 bytes stays as it is');
  });
});

describe('signal payloads', () => {
  const cases: WorkSignal[] = [
    { kind: 'runs' },
    { kind: 'deliveries' },
    { kind: 'finished', runId: '019ab3c4-0000-7000-8000-000000000001' },
    { kind: 'heartbeat', agentId: 'main' },
    { kind: 'lockout', client: '2001:db8::1', lockedUntil: 1_700_000_300_000 },
  ];
  for (const signal of cases) {
    it(`decodes what it encodes: ${signal.kind}`, () => {
      assert.deepEqual(decodeSignal(encodeSignal(signal)), signal);
    });
  }
  it('ignores payloads it does not know', () => {
    assert.equal(decodeSignal('bogus'), null);
    assert.equal(decodeSignal('lockout:soon:1.2.3.4'), null);
  });
});

describe('a store on a schema with a 63-character name', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: long schema names: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const schema = `hg_test_${Date.now().toString(36)}_${'l'.repeat(63)}`.slice(0, 63);
  const stores: Store[] = [];
  after(async () => {
    for (const s of stores) await s.close();
    await dropSchema(schema);
  });

  it('announces work to its replicas', async () => {
    const a = await createPostgresStore({ url: POSTGRES_URL, schema, poolSize: 2, mode: 'serve' });
    stores.push(a);
    const b = await createPostgresStore({ url: POSTGRES_URL, schema, poolSize: 2, mode: 'serve' });
    stores.push(b);
    const seen: WorkSignal[] = [];
    b.subscribe((s) => seen.push(s));
    await a.enqueueRun(newRun('s'));
    for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(seen, [{ kind: 'runs' }]);
  });
});
