import type { ChannelValue, ThinkingLevel, WakeMode } from '../config/index.js';

/** Where an action came from; decides whether its content is wrapped as untrusted. */
export interface ActionSource {
  /** `wake`, `agent`, or the mapping id that produced it. */
  hook: string;
  /** Content came from outside the gateway (every hook); false only for trusted internal events. */
  external: boolean;
  /** Set by a mapping's `allowUnsafeExternalContent: true`. */
  allowUnsafeExternalContent: boolean;
}

/** A system event to put on an agent's main session (the effect of a wake). */
export interface NewSystemEvent {
  id: string;
  agentId: string;
  /** The main session's key, `agent:<id>:main`. */
  sessionKey: string;
  text: string;
  mode: WakeMode;
  source: ActionSource;
  createdAt: number;
}

export interface SystemEventRecord extends NewSystemEvent {
  /** When a heartbeat consumed the event; `null` while pending. */
  consumedAt: number | null;
}

export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';

/** An isolated agent run, with every field already resolved by policy. */
export interface NewRun {
  id: string;
  agentId: string;
  sessionKey: string;
  message: string;
  /** Human-readable hook name used in the summary. */
  name: string;
  wakeMode: WakeMode;
  deliver: boolean;
  channel: ChannelValue;
  to: string | null;
  /** Resolved model ref (`provider/model`), or `null` for the agent's default. */
  model: string | null;
  thinking: ThinkingLevel | null;
  timeoutSeconds: number;
  source: ActionSource;
  createdAt: number;
}

export interface RunRecord extends NewRun {
  state: RunState;
  attempts: number;
  startedAt: number | null;
  finishedAt: number | null;
  reply: string | null;
  error: string | null;
}

/** Newest-first listing options. */
export interface ListOptions {
  /** @default 20 */
  limit?: number;
}
