import type { ActionSource } from './types.js';

/**
 * How an event's or a run's source is stored (both stores): JSON holding `hook`, and the other
 * fields only where they differ from a hook's usual source (`external: true`,
 * `allowUnsafeExternalContent: false`). A wake from `/hooks/wake` is stored as `{"hook":"wake"}`
 * instead of its 68 characters in full (a stored wake 162 bytes instead of 218). The column stays JSON
 * with a `hook` key, so queries read `$.hook` as before, and rows written in full read the same.
 */
export function encodeSource(source: ActionSource): string {
  const stored: Partial<ActionSource> & { hook: string } = { hook: source.hook };
  if (!source.external) stored.external = false;
  if (source.allowUnsafeExternalContent) stored.allowUnsafeExternalContent = true;
  return JSON.stringify(stored);
}

/** Reads a stored source, either form, with the fields left out at their usual values. */
export function decodeSource(text: string): ActionSource {
  const stored = JSON.parse(text) as Partial<ActionSource> & { hook: string };
  return {
    hook: stored.hook,
    external: stored.external ?? true,
    allowUnsafeExternalContent: stored.allowUnsafeExternalContent ?? false,
  };
}
