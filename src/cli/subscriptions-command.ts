import { viewSubscription, type SubscriptionView } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { iso, jsonOutput } from './format.js';
import { openStoreOrReport } from './open-store-or-report.js';

function subscriptionLines(s: SubscriptionView): string {
  const args = Object.keys(s.arguments).length === 0 ? '' : `  ${JSON.stringify(s.arguments)}`;
  const lines = [
    `${s.id}  ${s.state.padEnd(10)}  ${s.name}${args}  delivered ${s.delivered}  cursor ${s.cursor}`,
    `    ${s.url}`,
    `    expires ${s.expiresAt === null ? 'never' : iso(s.expiresAt)}  last delivery ${iso(s.lastDeliveryAt)}${s.leaseOwner === null ? '' : `  held by ${s.leaseOwner}`}`,
  ];
  if (s.lastError !== null)
    lines.push(`    last error: ${s.lastError} (${s.attempts} tries, next ${iso(s.nextAttemptAt)})`);
  if (s.endReason !== null) lines.push(`    ending: ${s.endReason}`);
  return lines.join('\n');
}

/** `hookgate subscriptions`: the MCP Events webhook subscriptions, oldest first (never their secrets). */
export async function subscriptionsCommand(
  configPath: string,
  options: { json: boolean },
  deps: CliDeps,
): Promise<number> {
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout(options.json ? '[]\n' : 'No subscriptions.\n');
    return EXIT_OK;
  }
  try {
    const list = (await store.listSubscriptions()).map(viewSubscription);
    if (options.json) deps.stdout(jsonOutput(list));
    else deps.stdout(list.length === 0 ? 'No subscriptions.\n' : `${list.map(subscriptionLines).join('\n')}\n`);
  } finally {
    await store.close();
  }
  return EXIT_OK;
}

/**
 * `hookgate subscriptions remove <id>`: ends a subscription; the gateway sending it tells its
 * callback (`terminated`, reason `removed`) and deletes it.
 */
export async function removeSubscriptionCommand(configPath: string, id: string, deps: CliDeps): Promise<number> {
  const store = await openStoreOrReport(configPath, deps, 'write');
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stderr(`hookgate: no subscription "${id}"\n`);
    return EXIT_FAILURE;
  }
  try {
    const s = await store.getSubscription(id);
    if (s === null) {
      deps.stderr(`hookgate: no subscription "${id}"\n`);
      return EXIT_FAILURE;
    }
    // One that never activated has no callback to tell: it goes at once.
    const done =
      s.state === 'activating'
        ? await store.deleteSubscription(id)
        : await store.terminateSubscription(id, 'removed', Date.now());
    if (!done) {
      deps.stderr(`hookgate: subscription ${id} is already ending\n`);
      return EXIT_FAILURE;
    }
    deps.stdout(
      s.state === 'activating'
        ? `Removed subscription ${id}.\n`
        : `Removed subscription ${id}; the running gateway tells its callback and deletes it within a second or two.\n`,
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
