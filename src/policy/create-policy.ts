import { randomUUID } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { RequestError, type ErrorCode } from '../common/errors.js';
import type { Ids } from '../common/ids.js';
import {
  GENERATED_SESSION_PREFIX,
  resolveModel,
  type ChannelValue,
  type Config,
  type ThinkingLevel,
  type WakeMode,
} from '../config/index.js';
import type { ActionSource, NewRun, NewSystemEvent } from '../store/index.js';
import { isAgentAllowed, mainSessionKey, resolveAgentId, resolveDefaultAgentId } from './resolve-agent.js';

/** A wake as built by a hook, before policy. */
export interface WakeRequest {
  text: string;
  mode: WakeMode;
  source: ActionSource;
}

/** An `event` mapping's occurrence as built by a hook, before policy: published, not acted on here. */
export interface EventRequest {
  text: string;
  /** Which agent it is about (for subscribers' `agentId` filter); unknown or absent: the default agent. */
  agentId?: string;
  source: ActionSource;
}

/** An `event` action with its defaults filled: what the log records for it. */
export interface EventAction {
  id: string;
  agentId: string;
  text: string;
  source: ActionSource;
  createdAt: number;
}

/** An agent action as built by a hook, before policy. */
export interface AgentRequest {
  message: string;
  name?: string;
  agentId?: string;
  sessionKey?: string;
  /** `request`: the caller sent the key (needs `allowRequestSessionKey`); `mapping`: configured. */
  sessionKeyOrigin?: 'request' | 'mapping';
  wakeMode: WakeMode;
  deliver: boolean;
  channel: ChannelValue;
  to?: string;
  model?: string;
  thinking?: ThinkingLevel;
  timeoutSeconds?: number;
  source: ActionSource;
  /** The caller waits for the run to end (`waitForCompletion`); `returnReply` puts the reply in the answer. */
  wait?: { returnReply: boolean };
  /** A mapping's `coalesce`, its key rendered and scoped to the mapping. */
  coalesce?: { key: string; windowMs: number };
}

/** Applies the hooks policy and fills every default, producing the records to store. */
export interface Policy {
  resolveWake(request: WakeRequest): NewSystemEvent;
  resolveAgentRun(request: AgentRequest): NewRun;
  resolveEvent(request: EventRequest): EventAction;
}

function deny(code: ErrorCode, path: string, message: string): never {
  throw new RequestError(code, { message: `${message}.`, issues: [{ path, message }] });
}

export function createPolicy(deps: { config: Config; ids: Ids; clock: Clock }): Policy {
  const { hooks, agents } = deps.config;

  const resolveSessionKey = (r: AgentRequest): string => {
    if (r.sessionKey === undefined) return hooks.defaultSessionKey ?? `${GENERATED_SESSION_PREFIX}${randomUUID()}`;
    if (r.sessionKeyOrigin !== 'mapping' && !hooks.allowRequestSessionKey) {
      deny(
        'session_key_not_allowed',
        'sessionKey',
        'sessionKey is refused unless hooks.allowRequestSessionKey is true',
      );
    }
    const prefixes = hooks.allowedSessionKeyPrefixes;
    const key = r.sessionKey;
    if (prefixes !== undefined && !prefixes.some((p) => key.startsWith(p))) {
      deny('session_key_not_allowed', 'sessionKey', `sessionKey must start with one of: ${prefixes.join(', ')}`);
    }
    return key;
  };

  return {
    resolveWake(r) {
      const agentId = resolveDefaultAgentId(agents);
      return {
        id: deps.ids.next(),
        agentId,
        sessionKey: mainSessionKey(agentId),
        text: r.text,
        mode: r.mode,
        source: r.source,
        createdAt: deps.clock.now(),
      };
    },
    resolveEvent(r) {
      return {
        id: deps.ids.next(),
        agentId: resolveAgentId(agents, r.agentId),
        text: r.text,
        source: r.source,
        createdAt: deps.clock.now(),
      };
    },
    resolveAgentRun(r) {
      const agentId = resolveAgentId(agents, r.agentId);
      if (r.agentId !== undefined && !isAgentAllowed(hooks.allowedAgentIds, agentId)) {
        deny('agent_not_allowed', 'agentId', `agentId "${r.agentId}" is not allowed by hooks.allowedAgentIds`);
      }
      let model: string | null = null;
      if (r.model !== undefined) {
        const resolved = resolveModel(deps.config, r.model);
        if (!resolved.ok) deny(resolved.code, 'model', resolved.message);
        model = resolved.ref;
      }
      if (r.deliver && r.channel !== 'last' && deps.config.channels[r.channel] === undefined) {
        deny(
          'channel_not_configured',
          'channel',
          `channel ${r.channel} is not configured (channels.${r.channel}); configure it or set deliver to false`,
        );
      }
      const sessionKey = resolveSessionKey(r);
      return {
        id: deps.ids.next(),
        agentId,
        sessionKey,
        message: r.message,
        name: r.name ?? r.source.hook,
        wakeMode: r.wakeMode,
        deliver: r.deliver,
        channel: r.channel,
        to: r.to ?? null,
        model,
        thinking: r.thinking ?? null,
        timeoutSeconds: r.timeoutSeconds ?? agents.defaults.timeoutSeconds,
        source: r.source,
        createdAt: deps.clock.now(),
        ...(r.coalesce === undefined ? {} : { coalesce: r.coalesce }),
      };
    },
  };
}
