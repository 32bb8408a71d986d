import type { ActionSource } from './types.js';

/**
 * How an event's or a run's source is stored (both stores): JSON holding `hook` and `external`,
 * `allowUnsafeExternalContent`, `summary` and `delivered` only when true, and `priority` only when it is `high`. A wake from `/hooks/wake` is stored as
 * `{"hook":"wake","external":true}` instead of its 68 characters in full. `external` is always
 * written: code from before this encoding reads a missing field as false, and would take a hook's
 * content as trusted (no untrusted-content wrapper) on a downgrade or in a PostgreSQL fleet being
 * upgraded; a missing `allowUnsafeExternalContent` reads as false there too, the safe side. The
 * column stays JSON with a `hook` key, so queries read `$.hook` as before, and rows written in full
 * read the same.
 */
export function encodeSource(source: ActionSource): string {
  const stored: Record<string, unknown> = { hook: source.hook, external: source.external };
  if (source.allowUnsafeExternalContent) stored['allowUnsafeExternalContent'] = true;
  if (source.priority === 'high') stored['priority'] = 'high';
  if (source.summary === true) stored['summary'] = true;
  if (source.delivered === true) stored['delivered'] = true;
  return JSON.stringify(stored);
}

/**
 * `encodeSource` for one store, which keeps the last text it made: an ingress's actions come mostly
 * from one hook after another of the same kind, and three comparisons cost less than a
 * `JSON.stringify` (which took 1.3–1.8 µs of a wake's time on the serving thread under load).
 */
export function createSourceEncoder(): (source: ActionSource) => string {
  let hook: string | null = null;
  let external = false;
  let unsafe = false;
  let priority: string | undefined;
  let summary: boolean | undefined;
  let delivered: boolean | undefined;
  let text = '';
  return (source) => {
    if (
      source.hook !== hook ||
      source.external !== external ||
      source.allowUnsafeExternalContent !== unsafe ||
      source.priority !== priority ||
      source.summary !== summary ||
      source.delivered !== delivered
    ) {
      text = encodeSource(source);
      ({ hook, external, allowUnsafeExternalContent: unsafe, priority, summary, delivered } = source);
    }
    return text;
  };
}

/** Reads a stored source, short or in full; a field left out reads as the safe value (external, unsafe content not allowed). */
export function decodeSource(text: string): ActionSource {
  const stored = JSON.parse(text) as Partial<ActionSource> & { hook: string };
  const source: ActionSource = {
    hook: stored.hook,
    external: stored.external ?? true,
    allowUnsafeExternalContent: stored.allowUnsafeExternalContent ?? false,
  };
  if (stored.priority === 'high') source.priority = 'high';
  if (stored.summary === true) source.summary = true;
  if (stored.delivered === true) source.delivered = true;
  return source;
}
