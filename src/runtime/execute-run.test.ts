import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../common/clock.js';
import { createIds } from '../common/ids.js';
import { createLog } from '../common/log.js';
import { ConfigSchema } from '../config/index.js';
import type { Store } from '../store/index.js';
import { createStoreFixture, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { newRun } from '../../test/helpers/store-records.js';
import { createModelRegistry } from './create-model-registry.js';
import { executeRun } from './execute-run.js';
import type { RuntimeDeps } from './runtime-deps.js';

describe('executeRun', () => {
  let f: StoreFixture;
  beforeEach(async () => {
    f = await createStoreFixture('sqlite', { leaseClock: systemClock });
  });
  afterEach(() => f.dispose());

  /** Deps over the fixture's store, with `store` replaced where the test says. */
  const depsWith = (store: Store): RuntimeDeps => {
    const config = ConfigSchema.parse({ agents: { list: [{ id: 'main' }] } });
    return {
      config,
      configDir: '.',
      store,
      models: createModelRegistry(config, Date.now),
      delivery: { deliver: () => undefined },
      log: createLog({ level: 'silent' }),
      clock: systemClock,
      ids: createIds(),
      retry: { now: Date.now, sleep: async () => undefined, random: () => 0 },
    };
  };

  it('hands a run back, not failed, when its session history cannot be read', async () => {
    const queued = newRun('hook:history', { deliver: false });
    await f.store.enqueueRun(queued);
    const [run] = await f.store.claimRuns({ owner: 'test', limit: 1, leaseMs: 60_000 });
    let modelCalls = 0;
    const store: Store = Object.create(f.store, {
      readTranscript: {
        value: () => Promise.reject(Object.assign(new Error('terminating connection'), { code: '57P01' })),
      },
    }) as Store;
    const deps = depsWith(store);
    const resolve = deps.models.resolve.bind(deps.models);
    deps.models.resolve = (ref) => {
      const model = resolve(ref);
      const complete = model.provider.complete.bind(model.provider);
      return {
        ...model,
        provider: {
          complete: (req) => {
            modelCalls++;
            return complete(req);
          },
        },
      };
    };
    const result = await executeRun(deps, run!, new AbortController().signal);
    assert.equal(result.recorded, false);
    assert.equal(modelCalls, 0, 'the model was not called');
    const after = await f.store.getRun(queued.id);
    assert.equal(after?.state, 'queued', 'back in the queue, for another try');
    assert.equal(after?.attempts, 0, 'the try is not counted against the run');
  });
});
