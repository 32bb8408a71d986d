import type { DeliveryWithAttempts } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { openStoreOrReport } from './open-store-or-report.js';
import { iso, jsonOutput } from './format.js';

function deliveryLines(d: DeliveryWithAttempts): string {
  const route =
    d.resolvedChannel === null
      ? `${d.channel}${d.to === null ? '' : `:${d.to}`}`
      : `${d.resolvedChannel}:${d.resolvedTo ?? '?'}`;
  const lines = [
    `${d.id}  ${d.state.padEnd(7)}  ${route}  attempts ${d.attempts}  created ${iso(d.createdAt)}  run ${d.runId ?? '(heartbeat)'}`,
  ];
  if (d.error !== null) lines.push(`    ${d.state === 'pending' ? 'last error' : 'reason'}: ${d.error}`);
  if (d.state === 'pending' && d.nextAttemptAt !== null) lines.push(`    next attempt: ${iso(d.nextAttemptAt)}`);
  return lines.join('\n');
}

/** `hookgate deliveries`: deliveries newest first, with their attempts in JSON. */
export async function deliveriesCommand(
  configPath: string,
  options: { json: boolean; limit: number; failed: boolean },
  deps: CliDeps,
): Promise<number> {
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout(options.json ? '[]\n' : 'No deliveries yet.\n');
    return EXIT_OK;
  }
  try {
    const list = await store.listDeliveries({
      limit: options.limit,
      ...(options.failed ? { state: 'failed' as const } : {}),
    });
    if (options.json) deps.stdout(jsonOutput(list));
    else deps.stdout(list.length === 0 ? 'No deliveries.\n' : `${list.map(deliveryLines).join('\n')}\n`);
  } finally {
    await store.close();
  }
  return EXIT_OK;
}

/** `hookgate retry <deliveryId>`: puts a failed or skipped delivery back in the queue. */
export async function retryCommand(configPath: string, id: string, deps: CliDeps): Promise<number> {
  // One conditional UPDATE, safe beside a running gateway: it sees the delivery at its next poll.
  const store = await openStoreOrReport(configPath, deps, 'write');
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stderr(`hookgate: no delivery "${id}"\n`);
    return EXIT_FAILURE;
  }
  try {
    const d = await store.getDelivery(id);
    if (d === null) {
      deps.stderr(`hookgate: no delivery "${id}"\n`);
      return EXIT_FAILURE;
    }
    if (!(await store.requeueDelivery(id, Date.now()))) {
      deps.stderr(`hookgate: delivery ${id} is ${d.state}; only failed or skipped deliveries can be retried\n`);
      return EXIT_FAILURE;
    }
    deps.stdout(`Requeued delivery ${id}; the running gateway sends it within a second.\n`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
