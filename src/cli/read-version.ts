import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in Hookgate's own package.json, found by walking up from this module: the same
 * answer from the bundle (`dist/bundle/`), the compiled tree (`dist/src/cli/`) and an npm install.
 */
export function readVersion(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'hookgate' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here (or not ours): keep climbing.
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
