import type { IncomingHttpHeaders } from 'node:http';
import { RequestError, type Issue } from '../../common/errors.js';
import type { MappingConfig } from '../../config/index.js';
import type { AgentRequest, EventRequest, WakeRequest } from '../../policy/index.js';
import type { ActionSource } from '../../store/index.js';
import { parseAgentPayload } from '../parse-agent-payload.js';
import { describe, parseWakePayload } from '../parse-wake-payload.js';
import type { Payload } from '../read-fields.js';
import type { TransformInput, TransformRunner } from '../transforms/create-transform-runner.js';
import { matchMapping, RESERVED_HOOK_NAMES, trimSlashes, type CompiledMapping } from './compile-mappings.js';
import { parsePath, readPath, renderTemplate, type TemplateContext } from './render-template.js';

/** A mapped hook call as the ingress received it. */
export interface MappedHookCall {
  name: string;
  payload: Payload;
  headers: IncomingHttpHeaders;
  /** Path and query of the request. */
  url: string;
  /**
   * Set when the request was authenticated by a provider signature instead of the hook token:
   * the mappings whose keys verified it. Only those mappings may then serve it.
   */
  signedBy?: { mappingIds: readonly string[] };
  /** The sender's own id for this delivery, when its signature scheme names one (kept for deduplication). */
  deliveryId?: string;
  /** Slack's `X-Slack-Retry-Num`: present only when Slack is retrying a delivery. */
  retryNum?: number;
  /** The request record's id (the request log's), carried into what the request publishes. */
  requestId?: string;
  /**
   * The relay's id of a request a home gateway pulled: its idempotency identity when it carries no
   * key of its own, so a batch leased again after a crash is recognised.
   */
  relayId?: string;
  /**
   * An operator (authenticated by the gateway token) replays a recorded request: a mapping with
   * `verify.required` serves it without a signature, and it is a new request, never an
   * idempotent repeat of the one it replays.
   */
  replay?: true;
}

/** One action a mapping builds. */
type SingleRequest =
  | { kind: 'wake'; request: WakeRequest }
  | { kind: 'agent'; request: AgentRequest }
  | { kind: 'event'; request: EventRequest };

/** One item of a `forEach` mapping: its action, its index, and its own id when `idPath` names one. */
interface MappedItem {
  index: number;
  identity: string | null;
  action: SingleRequest;
  /** The item itself, as the payload held it. */
  item: unknown;
}

export type MappedRequest =
  | SingleRequest
  /** Nothing to do: a transform returned `null`, or (`ignored`) the mapping's action is `ignore`. */
  | { kind: 'skip'; ignored?: true }
  /** A `forEach` mapping: one action per item the transform did not skip. */
  | { kind: 'many'; items: MappedItem[] };

/**
 * The characters of text and messages the items of one `forEach` request may make, all together:
 * eight times the default `hooks.maxBodyBytes`, so a list of ordinary items always fits.
 */
export const MAX_ACTIONS_CHARS = 2 * 1024 * 1024;

/** Headers never shown to templates or transforms: they carry credentials. */
const SECRET_HEADERS = new Set([
  'authorization',
  'cookie',
  'proxy-authorization',
  'x-hookgate-token',
  'x-openclaw-token',
]);

/** Keys a transform may set on the action it returns. */
const OVERRIDABLE = [
  'action',
  'text',
  'mode',
  'message',
  'name',
  'agentId',
  'sessionKey',
  'wakeMode',
  'deliver',
  'channel',
  'to',
  'model',
  'thinking',
  'timeoutSeconds',
] as const;

/** A request's headers without those that carry credentials, each as one string (what templates, transforms and request records see). */
export function safeHeaders(headers: IncomingHttpHeaders | Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || SECRET_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function queryOf(url: string): Record<string, string> {
  const q = url.indexOf('?');
  const out: Record<string, string> = {};
  if (q === -1) return out;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}

/** Without a template, the action reads `text`/`message` from the payload, else the payload as JSON. */
function defaultContent(payload: Payload, key: 'text' | 'message'): string {
  const v = payload[key];
  return typeof v === 'string' ? v : JSON.stringify(payload);
}

/** The action's fields as the mapping's templates build them. */
function templatedFields(m: MappingConfig, context: TemplateContext, payload: Payload): Payload {
  const render = (t: string | undefined): string | undefined => {
    if (t === undefined) return undefined;
    const out = renderTemplate(t, context).trim();
    return out === '' ? undefined : out;
  };
  const fields: Payload = { action: m.action ?? 'agent' };
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) fields[key] = value;
  };
  set('text', m.textTemplate === undefined ? defaultContent(payload, 'text') : renderTemplate(m.textTemplate, context));
  set(
    'message',
    m.messageTemplate === undefined ? defaultContent(payload, 'message') : renderTemplate(m.messageTemplate, context),
  );
  set('name', render(m.name));
  set('agentId', m.agentId);
  set('sessionKey', render(m.sessionKey));
  set('wakeMode', m.wakeMode);
  set('deliver', m.deliver);
  set('channel', m.channel);
  set('to', render(m.to));
  set('model', render(m.model));
  set('thinking', render(m.thinking));
  set('timeoutSeconds', m.timeoutSeconds);
  return fields;
}

/**
 * The request must be authenticated for the mapping that serves it: a signature verified by
 * another mapping's key is not enough, and `verify.required` refuses the hook token.
 */
function checkAuthentication(mapped: CompiledMapping, call: MappedHookCall): void {
  if (call.signedBy !== undefined && !call.signedBy.mappingIds.includes(mapped.id)) {
    throw new RequestError('signature_invalid', {
      message: `The signature does not verify for mapping "${mapped.id}".`,
    });
  }
  if (call.signedBy === undefined && call.replay !== true && mapped.mapping.verify?.required === true) {
    throw new RequestError('signature_invalid', {
      message: `Mapping "${mapped.id}" accepts only signed requests (verify.required).`,
    });
  }
}

/** An empty rendered field is named together with the template that produced it. */
function checkRendered(m: MappingConfig, fields: Payload): void {
  const key = fields['action'] === 'agent' ? 'message' : 'text';
  const template = key === 'text' ? m.textTemplate : m.messageTemplate;
  const value = fields[key];
  if (template !== undefined && typeof value === 'string' && value.trim() === '') {
    const field = key === 'text' ? 'textTemplate' : 'messageTemplate';
    invalid([
      {
        path: key,
        message: `${key} must not be empty (${field} rendered nothing; check its {{ paths }} against the payload)`,
      },
    ]);
  }
}

function invalid(issues: Issue[]): never {
  throw new RequestError('invalid_payload', { message: describe(issues), issues });
}

async function applyTransform(
  mapped: CompiledMapping,
  input: TransformInput,
  fields: Payload,
  run: TransformRunner,
): Promise<Payload | null> {
  const spec = mapped.transform!;
  let result: unknown;
  try {
    result = await run(spec, input);
  } catch (error) {
    throw new RequestError('transform_failed', { cause: error });
  }
  if (result === null) return null;
  if (result === undefined) return fields;
  if (typeof result !== 'object' || Array.isArray(result)) {
    throw new RequestError('transform_failed', {
      cause: new Error(
        `transform ${spec.file} returned ${Array.isArray(result) ? 'an array' : typeof result}; expected an object, null or nothing`,
      ),
    });
  }
  const out = { ...fields };
  for (const key of OVERRIDABLE) if (Object.hasOwn(result, key)) out[key] = (result as Payload)[key];
  // OpenClaw transforms name the action `kind`; `action` wins when both are set.
  if (Object.hasOwn(result, 'kind') && !Object.hasOwn(result, 'action')) out['action'] = (result as Payload)['kind'];
  // `mode` is the wake's name for `wakeMode`; a transform's `mode` overrides the mapping's wakeMode.
  if (Object.hasOwn(result, 'mode') && !Object.hasOwn(result, 'wakeMode'))
    out['wakeMode'] = (result as Payload)['mode'];
  return out;
}

/**
 * The mapping that serves a call, before anything is built: its name matched (404), the call
 * authenticated for it (401), the payload of the shape a preset expects (400).
 */
export function resolveMapping(mappings: readonly CompiledMapping[], call: MappedHookCall): CompiledMapping {
  // `/hooks//wake` is not a way around the built-in endpoint: reserved names are never mapped.
  const mapped = RESERVED_HOOK_NAMES.has(trimSlashes(call.name))
    ? undefined
    : matchMapping(mappings, call.name, call.payload, call.headers);
  if (mapped === undefined)
    // The name is not echoed: the caller wrote it, and an answer is no place for what a caller wrote.
    throw new RequestError('hook_not_found');
  checkAuthentication(mapped, call);
  const shapeIssues = mapped.validate?.(call.payload) ?? [];
  if (shapeIssues.length > 0) invalid(shapeIssues);
  return mapped;
}

/**
 * Resolves `/hooks/<name>` through the mappings (first match wins), builds the action from its
 * templates, lets its transform override or skip it, and validates the result exactly like a
 * `/wake` or `/agent` payload.
 */
export async function buildMappedRequest(
  mappings: readonly CompiledMapping[],
  runTransform: TransformRunner,
  call: MappedHookCall,
  now: number,
): Promise<MappedRequest> {
  const mapped = resolveMapping(mappings, call);
  if (mapped.mapping.action === 'ignore') return { kind: 'skip', ignored: true };
  const headers = safeHeaders(call.headers);
  const path = trimSlashes(call.name);
  const context: TemplateContext = {
    payload: call.payload,
    headers,
    query: queryOf(call.url),
    path,
    now: new Date(now).toISOString(),
  };
  const input: TransformInput = { payload: call.payload, headers, url: call.url, path };
  const each = mapped.mapping.forEach;
  if (each === undefined) return buildOne(mapped, call, context, input, runTransform);
  const list = readPath(context, parsePath(each.path)!);
  if (!Array.isArray(list))
    invalid([{ path: each.path, message: `${each.path} must be an array (forEach.path of mapping "${mapped.id}")` }]);
  if (list.length > each.maxItems) {
    throw new RequestError('too_many_items', {
      message: `${each.path} has ${list.length} items; mapping "${mapped.id}" takes at most ${each.maxItems}.`,
    });
  }
  const items: MappedItem[] = [];
  let chars = 0;
  for (const [index, item] of list.entries()) {
    const built = await buildOne(mapped, call, { ...context, item }, { ...input, item }, runTransform);
    if (built.kind === 'skip') continue;
    // Templates render per item against the whole payload: a part of it named in a template is
    // written once per item. Past the bound, the request is refused rather than recorded.
    chars += built.kind === 'agent' ? built.request.message.length : built.request.text.length;
    if (chars > MAX_ACTIONS_CHARS) {
      throw new RequestError('actions_too_large', {
        message: `The ${list.length} items of ${each.path} make actions of more than ${MAX_ACTIONS_CHARS} characters (mapping "${mapped.id}"); one request records at most that.`,
      });
    }
    const id = each.idPath === undefined ? undefined : readPath({ ...context, payload: item }, parsePath(each.idPath)!);
    const identity = typeof id === 'string' || typeof id === 'number' ? `item:${String(id)}` : null;
    items.push({ index, identity, action: built, item });
  }
  return items.length === 0 ? { kind: 'skip' } : { kind: 'many', items };
}

/** One action from the mapping's templates (and transform) over `context`. */
async function buildOne(
  mapped: CompiledMapping,
  call: MappedHookCall,
  context: TemplateContext,
  input: TransformInput,
  runTransform: TransformRunner,
): Promise<SingleRequest | { kind: 'skip' }> {
  // Without a template, a forEach action carries its item (an object's text or message, else the item as JSON).
  const item = context.item;
  const base: Payload =
    item === undefined
      ? call.payload
      : item !== null && typeof item === 'object' && !Array.isArray(item)
        ? (item as Payload)
        : { text: JSON.stringify(item), message: JSON.stringify(item) };
  let fields: Payload | null = templatedFields(mapped.mapping, context, base);
  if (mapped.transform !== undefined) {
    fields = await applyTransform(mapped, input, fields, runTransform);
    if (fields === null) return { kind: 'skip' };
  }
  checkRendered(mapped.mapping, fields);
  const source: ActionSource = {
    hook: mapped.id,
    external: true,
    allowUnsafeExternalContent: mapped.mapping.allowUnsafeExternalContent === true,
    ...(mapped.mapping.priority === 'high' ? { priority: 'high' as const } : {}),
  };
  const name = typeof fields['name'] === 'string' ? fields['name'] : mapped.id;
  switch (fields['action']) {
    case 'wake': {
      const wake = parseWakePayload({ text: fields['text'], mode: fields['wakeMode'] ?? fields['mode'] });
      return { kind: 'wake', request: { text: wake.text, mode: wake.mode, source } };
    }
    case 'agent': {
      const agent = parseAgentPayload({ ...fields, name });
      const m = mapped.mapping;
      const wait = m.waitForCompletion === true ? { wait: { returnReply: m.returnReply === true } } : {};
      const key = m.coalesce === undefined ? '' : renderTemplate(m.coalesce.key, context).trim();
      // Scoped to the mapping, so two mappings rendering the same key never merge their runs.
      const coalesce =
        m.coalesce === undefined || key === ''
          ? {}
          : { coalesce: { key: `${mapped.id}:${key}`, windowMs: m.coalesce.windowSeconds * 1000 } };
      return { kind: 'agent', request: { ...agent, ...wait, ...coalesce, sessionKeyOrigin: 'mapping', source } };
    }
    case 'event': {
      // Published as it is rendered (MCP Events); nothing runs here, so only the text is checked.
      const wake = parseWakePayload({ text: fields['text'] });
      const agentId = typeof fields['agentId'] === 'string' ? fields['agentId'] : undefined;
      return { kind: 'event', request: { text: wake.text, source, ...(agentId === undefined ? {} : { agentId }) } };
    }
    default:
      return invalid([{ path: 'action', message: 'action must be one of: wake, agent, event' }]);
  }
}
