import { systemClock } from '../common/clock.js';
import { createLog } from '../common/log.js';
import { createPruner, pruneCutoffs, type PruneCounts } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';
import { openStoreOrReport } from './open-store-or-report.js';

const LABELS: ReadonlyArray<[keyof PruneCounts, string]> = [
  ['events', 'consumed events'],
  ['runs', 'finished runs'],
  ['deliveries', 'ended deliveries'],
  ['transcript', 'transcript entries'],
  ['requests', 'request records'],
  ['eventLog', 'published occurrences (event log)'],
  ['idempotencyKeys', 'expired idempotency keys'],
  ['sessions', 'idle sessions'],
];

/** `hookgate prune [--dry-run]`: deletes (or counts) what the retention windows let go. */
export async function pruneCommand(configPath: string, options: { dryRun: boolean }, deps: CliDeps): Promise<number> {
  const loaded = loadOrReport(configPath, deps, { readOnly: options.dryRun });
  if (loaded === null) return EXIT_FAILURE;
  const store = await openStoreOrReport(configPath, deps, options.dryRun ? 'read' : 'write');
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout('Nothing to prune: no gateway has created the store yet.\n');
    return EXIT_OK;
  }
  try {
    const retention = loaded.config.store.retention;
    const counts = options.dryRun
      ? await store.countPrunable(pruneCutoffs(retention, Date.now()))
      : await createPruner({ store, retention, clock: systemClock, log: createLog({ level: 'silent' }) }).pruneAll();
    const verb = options.dryRun ? 'Would delete' : 'Deleted';
    deps.stdout(`${verb}: ${LABELS.map(([k, label]) => `${counts[k]} ${label}`).join(', ')}\n`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
