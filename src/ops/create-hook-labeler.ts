import type { HooksConfig } from '../config/index.js';
import { compileMappings } from '../hooks/index.js';

/** Label of requests that named no hook (a path outside `hooks.path`). */
const NO_HOOK = '_none';
/** Label of hook names no mapping names: they come from callers, so they would grow without bound. */
const OTHER_HOOK = '_other';

/**
 * Turns a request's hook name into a metrics label: `wake`, `agent` and each mapping's
 * `match.path` keep their name; anything else (an unknown name, a name only a catch-all mapping
 * takes) is `_other`. Reads the hooks config on every call, so a reload's mappings count at once.
 */
export function createHookLabeler(hooks: () => HooksConfig): (name: string | null) => string {
  // The names of the hooks config last seen: it changes only on a reload.
  let seen: HooksConfig | undefined;
  let names: ReadonlySet<string> = new Set();
  const namesOf = (h: HooksConfig): ReadonlySet<string> => {
    if (h !== seen) {
      names = new Set([
        'wake',
        'agent',
        ...compileMappings(h, '.').flatMap((m) => (m.matchPath === undefined ? [] : [m.matchPath])),
      ]);
      seen = h;
    }
    return names;
  };
  return (name) => {
    if (name === null) return NO_HOOK;
    return namesOf(hooks()).has(name) ? name : OTHER_HOOK;
  };
}
