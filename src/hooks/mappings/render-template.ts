/**
 * `{{ expr }}` templates. An expression is a path: a root (`payload`, `headers`, `query`, `path`,
 * `now`) or a bare payload key, then `.key` and `[n]` steps. Nothing else: no calls, operators or
 * filters, so a template can read the request but never run code.
 */

import { TEMPLATE_TAG, parsePath } from '../../common/template-syntax.js';

export { findInvalidExpressions, parsePath } from '../../common/template-syntax.js';

/** What a template can read. `headers` keys are lower-case. */
export interface TemplateContext {
  payload: unknown;
  headers: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string>>;
  /** The `<name>` segment the hook was called at. */
  path: string;
  /** ISO time of the request. */
  now: string;
  /** With `forEach`, the array item the action is built for. */
  item?: unknown;
}

/** Keys that would reach the prototype chain; they resolve to nothing. */
const BLOCKED = new Set(['__proto__', 'prototype', 'constructor']);
const ROOTS = new Set(['payload', 'headers', 'query', 'path', 'now', 'item']);

/** Reads a path from the context; `undefined` when any step is missing or blocked. */
export function readPath(context: TemplateContext, steps: ReadonlyArray<string | number>): unknown {
  const [first, ...rest] = steps;
  let value: unknown;
  let remaining: ReadonlyArray<string | number> = rest;
  if (typeof first === 'string' && ROOTS.has(first)) {
    value = context[first as keyof TemplateContext];
  } else {
    value = context.payload;
    remaining = steps;
  }
  for (const step of remaining) {
    if (value === null || typeof value !== 'object') return undefined;
    if (typeof step === 'number') {
      if (!Array.isArray(value)) return undefined;
      value = value[step];
    } else {
      if (BLOCKED.has(step) || !Object.hasOwn(value, step)) return undefined;
      value = (value as Record<string, unknown>)[step];
    }
  }
  return value;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Renders every `{{ expr }}`; an expression that is not a path, or a missing value, renders empty. */
export function renderTemplate(template: string, context: TemplateContext): string {
  return template.replace(TEMPLATE_TAG, (_tag, expr: string) => {
    const steps = parsePath(expr);
    return steps === null ? '' : stringify(readPath(context, steps));
  });
}
