import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { MAIN, completion, ids, newDelivery, newRequestRecord, newRun } from '../../test/helpers/store-records.js';
import { RequestError } from '../common/errors.js';
import type { HookHandler } from '../hooks/index.js';
import type { RequestRecord } from '../store/index.js';
import { createAdminApi, type AdminAnswer, type AdminCall } from './create-admin-api.js';

const call = (method: string, pathAndQuery: string): AdminCall => {
  const [path, query] = pathAndQuery.split('?');
  return { method, path: path!, query: new URLSearchParams(query ?? ''), client: '127.0.0.1' };
};

/** A request record to the `github` hook, accepted, with no payload unless `o` says otherwise. */
const requestRecord = (o: Partial<RequestRecord> = {}): RequestRecord =>
  newRequestRecord({ at: 1, path: '/hooks/github', hook: 'github', status: 204, ...o });

async function codeOf(p: Promise<AdminAnswer>): Promise<string> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof RequestError, String(error));
    return error.code;
  }
  return 'ok';
}

describe('createAdminApi', () => {
  let f: StoreFixture;
  let api: (c: AdminCall) => Promise<AdminAnswer>;
  const hookCalls: Array<{ name: string; dryRun: boolean }> = [];
  const handleHook: HookHandler = async (c, ingress) => {
    hookCalls.push({ name: c.name, dryRun: ingress !== undefined });
    return { kind: 'skip' };
  };
  beforeEach(async () => {
    f = await createStoreFixture('sqlite');
    hookCalls.length = 0;
    api = createAdminApi({ store: f.store, handleHook, hooksPath: () => '/hooks', clock: f.clock, ids });
  });
  afterEach(() => f.dispose());

  it('cancels a queued run: failed "cancelled", its summary on the main session', async () => {
    const run = newRun('hook:a', { name: 'Mail' });
    await f.store.enqueueRun(run);
    const answer = await api(call('POST', `/runs/${run.id}/cancel`));
    assert.equal(answer.status, 200);
    assert.equal((answer.body['run'] as { state: string }).state, 'failed');
    assert.equal((await f.store.getRun(run.id))?.error, 'cancelled');
    assert.deepEqual(
      (await f.store.listPendingEvents(MAIN)).map((e) => e.text),
      ['Hook Mail (failed): cancelled'],
    );
  });

  it('refuses to cancel a running run with 409 run_not_cancellable, changing nothing', async () => {
    const run = newRun('hook:b');
    await f.store.enqueueRun(run);
    await f.store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
    assert.equal(await codeOf(api(call('POST', `/runs/${run.id}/cancel`))), 'run_not_cancellable');
    assert.equal((await f.store.getRun(run.id))?.state, 'running');
    assert.deepEqual(await f.store.listPendingEvents(MAIN), []);
  });

  it('retries a failed delivery and refuses a pending one', async () => {
    const d = newDelivery();
    await f.store.addDelivery(d);
    assert.equal(await codeOf(api(call('POST', `/deliveries/${d.id}/retry`))), 'delivery_not_retryable');
    const [claimed] = await f.store.claimDueDeliveries({ owner: 'w', limit: 1, leaseMs: 1000, now: f.clock.now() });
    await f.store.recordDeliveryAttempt({
      deliveryId: d.id,
      claimId: claimed!.claimId,
      attempt: 1,
      at: 5,
      status: 400,
      error: 'Bad Request: chat not found',
      outcome: 'failed',
      resolvedChannel: 'telegram',
      resolvedTo: '42',
      partsSent: 0,
      nextAttemptAt: null,
      lastRoute: null,
    });
    const answer = await api(call('POST', `/deliveries/${d.id}/retry`));
    assert.equal((answer.body['delivery'] as { state: string }).state, 'pending');
    assert.equal((await f.store.getDelivery(d.id))?.attempts, 0);
  });

  it("shows a run with its delivery and that delivery's attempts", async () => {
    const run = newRun('hook:c');
    await f.store.enqueueRun(run);
    const [claimed] = await f.store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
    await f.store.completeRun(completion(claimed!));
    const { body } = await api(call('GET', `/runs/${run.id}`));
    assert.equal((body['run'] as { state: string }).state, 'succeeded');
    const delivery = body['delivery'] as { runId: string; attemptLog: unknown[] };
    assert.equal(delivery.runId, run.id);
    assert.deepEqual(delivery.attemptLog, []);
  });

  it('lists runs by state and requests by hook and status', async () => {
    await f.store.enqueueRun(newRun('hook:d'));
    const record: RequestRecord = {
      id: ids.next(),
      at: 1,
      method: 'POST',
      path: '/hooks/wake',
      hook: 'wake',
      client: '127.0.0.1',
      status: 401,
      code: 'unauthorized',
      reason: 'Missing or invalid hook token.',
      durationMs: 0.2,
      eventIds: [],
      runIds: [],
      payload: null,
      headers: null,
    };
    await f.store.recordRequest(record);
    assert.equal(((await api(call('GET', '/runs?state=queued'))).body['runs'] as unknown[]).length, 1);
    assert.equal(((await api(call('GET', '/runs?state=failed'))).body['runs'] as unknown[]).length, 0);
    assert.deepEqual(
      ((await api(call('GET', '/requests?status=401&hook=wake'))).body['requests'] as RequestRecord[]).map((r) => r.id),
      [record.id],
    );
    assert.deepEqual((await api(call('GET', `/requests/${record.id}`))).body['request'], record);
  });

  it('refuses a replay without a recorded payload, and dry-runs one with it through the given store', async () => {
    const base = requestRecord();
    await f.store.recordRequest(base);
    assert.equal(await codeOf(api(call('POST', `/requests/${base.id}/replay`))), 'payload_not_recorded');
    const withPayload = { ...base, id: ids.next(), payload: '{"action":"opened"}' };
    await f.store.recordRequest(withPayload);
    const dry = await api(call('POST', `/requests/${withPayload.id}/replay?dryRun=1`));
    assert.deepEqual(dry.body, { ok: true, dryRun: true, action: { kind: 'skip' } });
    await api(call('POST', `/requests/${withPayload.id}/replay`));
    assert.deepEqual(hookCalls, [
      { name: 'github', dryRun: true },
      { name: 'github', dryRun: false },
    ]);
  });

  it('says why a record cannot be replayed: no hook, refused before its body was read, recordPayloads off', async () => {
    const record = requestRecord;
    const messageOf = async (r: RequestRecord): Promise<string> => {
      await f.store.recordRequest(r);
      try {
        await api(call('POST', `/requests/${r.id}/replay`));
      } catch (error) {
        assert.ok(error instanceof RequestError && error.code === 'payload_not_recorded', String(error));
        return error.message;
      }
      return 'replayed';
    };
    assert.match(await messageOf(record({ path: '/elsewhere', hook: null, status: 404 })), /not sent to a hook/);
    assert.match(await messageOf(record({ status: 401, code: 'unauthorized' })), /refused \(401\) before its body/);
    assert.match(await messageOf(record({ status: 202 })), /gateway\.recordPayloads was off when it arrived/);
  });

  it('replays with the recorded headers, as an operator replay the hook handler can tell apart', async () => {
    const seen: Array<Parameters<HookHandler>[0]> = [];
    const replaying = createAdminApi({
      store: f.store,
      handleHook: async (c) => {
        seen.push(c);
        return { kind: 'skip' };
      },
      hooksPath: () => '/hooks',
      clock: f.clock,
      ids,
    });
    const r = requestRecord({
      status: 202,
      payload: '{"action":"opened"}',
      headers: { 'x-github-event': 'pull_request' },
    });
    await f.store.recordRequest(r);
    await replaying(call('POST', `/requests/${r.id}/replay`));
    assert.deepEqual(
      seen.map((c) => [c.name, c.headers, c.replay, c.url]),
      [['github', { 'x-github-event': 'pull_request' }, true, '/hooks/github']],
    );
  });

  it('refuses to replay a recorded payload nested deeper than a request may be, dry or not, calling no hook', async () => {
    const deep = requestRecord({
      status: 400,
      code: 'json_too_deep',
      payload: `{"a":${'['.repeat(150)}${']'.repeat(150)}}`,
    });
    await f.store.recordRequest(deep);
    const calls = hookCalls.length;
    assert.equal(await codeOf(api(call('POST', `/requests/${deep.id}/replay?dryRun=1`))), 'json_too_deep');
    assert.equal(await codeOf(api(call('POST', `/requests/${deep.id}/replay`))), 'json_too_deep');
    const deeper = { ...deep, id: ids.next(), payload: `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}` };
    await f.store.recordRequest(deeper);
    assert.equal(await codeOf(api(call('POST', `/requests/${deeper.id}/replay`))), 'json_too_deep');
    assert.equal(hookCalls.length, calls);
  });

  const refusals: Array<[string, string, string]> = [
    ['GET', '/runs?state=done', 'invalid_query'],
    ['GET', '/requests?limit=0', 'invalid_query'],
    ['GET', '/requests?status=abc', 'invalid_query'],
    ['GET', '/runs/nope', 'record_not_found'],
    ['GET', '/deliveries/nope', 'record_not_found'],
    ['POST', '/runs/nope/cancel', 'record_not_found'],
    ['POST', '/requests/nope/replay', 'record_not_found'],
    ['GET', '/runs/x/cancel', 'method_not_allowed'],
    ['DELETE', '/runs', 'method_not_allowed'],
    ['GET', '/nothing', 'not_found'],
  ];
  for (const [method, path, code] of refusals) {
    it(`answers ${method} ${path} with ${code}`, async () => {
      assert.equal(await codeOf(api(call(method, path))), code);
    });
  }
});
