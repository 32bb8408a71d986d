import type { SessionRecord } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { openStoreOrReport } from './open-store-or-report.js';
import { iso, jsonOutput } from './format.js';

function sessionLine(s: SessionRecord): string {
  const route = s.lastChannel === null ? '-' : `${s.lastChannel}:${s.lastTo ?? '?'}`;
  return `${s.key}  agent ${s.agentId}  ${s.transcriptEntries} messages  ${s.pendingEvents} pending  last route ${route}  updated ${iso(s.updatedAt)}`;
}

/** `hookgate sessions`: every session, most recently active first. */
export async function sessionsCommand(
  configPath: string,
  options: { json: boolean; limit: number },
  deps: CliDeps,
): Promise<number> {
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout(options.json ? '[]\n' : 'No sessions yet.\n');
    return EXIT_OK;
  }
  try {
    const sessions = await store.listSessions({ limit: options.limit });
    if (options.json) deps.stdout(jsonOutput(sessions));
    else deps.stdout(sessions.length === 0 ? 'No sessions yet.\n' : `${sessions.map(sessionLine).join('\n')}\n`);
  } finally {
    await store.close();
  }
  return EXIT_OK;
}

/** `hookgate session <key>`: one session's transcript and pending events. */
export async function sessionCommand(
  configPath: string,
  key: string,
  options: { json: boolean; limit: number },
  deps: CliDeps,
): Promise<number> {
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  const missing = (): number => {
    deps.stderr(`hookgate: no session "${key}"\n`);
    return EXIT_FAILURE;
  };
  if (store === 'empty') return missing();
  try {
    const session = await store.getSession(key);
    if (session === null) return missing();
    const transcript = await store.readTranscript(key, { limit: options.limit });
    const pending = await store.listPendingEvents(key);
    if (options.json) {
      deps.stdout(jsonOutput({ session, transcript, pendingEvents: pending }));
      return EXIT_OK;
    }
    const lines = [sessionLine(session), '', `Transcript (last ${options.limit}):`];
    for (const t of transcript) lines.push(`--- ${t.role} ${iso(t.createdAt)} (turn ${t.turnId})`, t.content);
    if (transcript.length === 0) lines.push('(empty)');
    lines.push('', 'Pending events:');
    for (const e of pending) lines.push(`- ${e.id} ${iso(e.createdAt)} ${e.mode}: ${e.text}`);
    if (pending.length === 0) lines.push('(none)');
    deps.stdout(`${lines.join('\n')}\n`);
  } finally {
    await store.close();
  }
  return EXIT_OK;
}
