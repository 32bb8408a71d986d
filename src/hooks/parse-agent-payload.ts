import { RequestError, type Issue } from '../common/errors.js';
import { CHANNEL_VALUES, MAX_TIMEOUT_SECONDS, THINKING_LEVELS, WAKE_MODES } from '../config/index.js';
import type { AgentRequest } from '../policy/index.js';
import { describe } from './parse-wake-payload.js';
import {
  readOptionalBoolean,
  readOptionalEnum,
  readOptionalPositiveNumber,
  readOptionalString,
  readRequiredString,
  type Payload,
} from './read-fields.js';

/** The agent payload, validated; unknown extra fields are ignored. */
type AgentPayload = Omit<AgentRequest, 'source' | 'sessionKeyOrigin'>;

/** Turns an `/agent` body into an `AgentPayload` or throws `invalid_payload` naming each field. */
export function parseAgentPayload(p: Payload): AgentPayload {
  const issues: Issue[] = [];
  const out: AgentPayload = {
    message: readRequiredString(p, 'message', issues),
    wakeMode: readOptionalEnum(p, 'wakeMode', WAKE_MODES, issues) ?? 'now',
    deliver: readOptionalBoolean(p, 'deliver', issues) ?? true,
    channel: readOptionalEnum(p, 'channel', CHANNEL_VALUES, issues) ?? 'last',
  };
  const name = readOptionalString(p, 'name', issues);
  const agentId = readOptionalString(p, 'agentId', issues);
  const sessionKey = readOptionalString(p, 'sessionKey', issues);
  const to = readOptionalString(p, 'to', issues);
  const model = readOptionalString(p, 'model', issues);
  const thinking = readOptionalEnum(p, 'thinking', THINKING_LEVELS, issues);
  const timeoutSeconds = readOptionalPositiveNumber(p, 'timeoutSeconds', MAX_TIMEOUT_SECONDS, issues);
  const waitForCompletion = readOptionalBoolean(p, 'waitForCompletion', issues);
  if (issues.length > 0) throw new RequestError('invalid_payload', { message: describe(issues), issues });
  if (name !== undefined) out.name = name;
  if (agentId !== undefined) out.agentId = agentId;
  if (sessionKey !== undefined) out.sessionKey = sessionKey;
  if (to !== undefined) out.to = to;
  if (model !== undefined) out.model = model;
  if (thinking !== undefined) out.thinking = thinking;
  if (timeoutSeconds !== undefined) out.timeoutSeconds = timeoutSeconds;
  if (waitForCompletion === true) out.wait = { returnReply: false };
  return out;
}
