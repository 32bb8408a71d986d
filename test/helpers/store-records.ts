import { createIds } from '../../src/common/ids.js';
import type {
  RequestRecord,
  ClaimedRun,
  IngressStore,
  NewDelivery,
  NewLogEvent,
  NewRun,
  NewSubscription,
  NewSystemEvent,
  RunCompletion,
  TranscriptEntry,
} from '../../src/store/index.js';

/** Records for store tests, with every field filled. */
export const ids = createIds();
export const source = { hook: 'agent', external: true, allowUnsafeExternalContent: false };
export const MAIN = 'agent:main:main';

export const newEvent = (text: string, o: Partial<NewSystemEvent> = {}): NewSystemEvent => ({
  id: ids.next(),
  agentId: 'main',
  sessionKey: MAIN,
  text,
  mode: 'now',
  source,
  createdAt: 5,
  ...o,
});

export const newRun = (sessionKey: string, o: Partial<NewRun> = {}): NewRun => ({
  id: ids.next(),
  agentId: 'main',
  sessionKey,
  message: 'm',
  name: 'agent',
  wakeMode: 'now',
  deliver: true,
  channel: 'telegram',
  to: '42',
  model: 'echo/echo',
  thinking: 'low',
  timeoutSeconds: 30,
  source,
  createdAt: 1,
  ...o,
});

export const newDelivery = (o: Partial<NewDelivery> = {}): NewDelivery => ({
  id: ids.next(),
  agentId: 'main',
  channel: 'telegram',
  to: '42',
  text: 'hello',
  runId: null,
  createdAt: 1,
  ...o,
});

export const turn = (sessionKey: string, turnId: string, at = 10): TranscriptEntry[] => [
  { sessionKey, role: 'user', content: 'prompt', turnId, createdAt: at },
  { sessionKey, role: 'assistant', content: 'reply', turnId, createdAt: at },
];

export const completion = (r: ClaimedRun, o: Partial<RunCompletion> = {}): RunCompletion => ({
  runId: r.id,
  claimId: r.claimId,
  state: 'succeeded',
  finishedAt: 10,
  model: 'echo/echo',
  reply: 'done',
  error: null,
  transcript: turn(r.sessionKey, r.id),
  summary: newEvent('Hook agent: done', { mode: r.wakeMode }),
  delivery: newDelivery({ runId: r.id, text: 'done' }),
  ...o,
});

export const newLogEvent = (name: string, o: Partial<NewLogEvent> = {}): NewLogEvent => ({
  id: ids.next(),
  name,
  agentId: 'main',
  requestId: null,
  createdAt: 5,
  data: { hook: name.replace(/^hook\./, ''), text: 'hello' },
  untrusted: true,
  ...o,
});

export const newSubscription = (id: string, o: Partial<NewSubscription> = {}): NewSubscription => ({
  id,
  name: 'hook.wake',
  argumentsJson: '{}',
  url: 'https://subscriber.example/hook',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  cursor: 0,
  expiresAt: null,
  maxAgeMs: null,
  createdAt: 1,
  ...o,
});
/** Queues a run of `agentId` and hook `hook` in a session of its own (so session order never holds it); resolves with its id. */
export async function enqueueAlone(
  store: Pick<IngressStore, 'enqueueRun'>,
  createdAt: number,
  o: { agentId?: string; hook?: string } = {},
): Promise<string> {
  const run = newRun(`hook:s-${ids.next()}`, {
    agentId: o.agentId ?? 'main',
    source: { ...source, hook: o.hook ?? 'agent' },
    createdAt,
  });
  await store.enqueueRun(run);
  return run.id;
}
/** A request record: an accepted wake at 1,000 ms, no payload. */
export const newRequestRecord = (o: Partial<RequestRecord> = {}): RequestRecord => ({
  id: ids.next(),
  at: 1_000,
  method: 'POST',
  path: '/hooks/wake',
  hook: 'wake',
  client: '127.0.0.1',
  status: 200,
  code: null,
  reason: null,
  durationMs: 1,
  eventIds: [],
  runIds: [],
  payload: null,
  headers: null,
  ...o,
});
