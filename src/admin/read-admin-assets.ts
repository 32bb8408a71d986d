import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A dashboard file, read once and served as is. */
export interface AdminAsset {
  body: Buffer;
  contentType: string;
}

/** The dashboard's files: plain HTML, JS modules and CSS, no build step. URL name → file name. */
const FILES = {
  '': { file: 'index.html', contentType: 'text/html; charset=utf-8' },
  'app.js': { file: 'app.js', contentType: 'text/javascript; charset=utf-8' },
  'dom.js': { file: 'dom.js', contentType: 'text/javascript; charset=utf-8' },
  'dispatch.js': { file: 'dispatch.js', contentType: 'text/javascript; charset=utf-8' },
  'app.css': { file: 'app.css', contentType: 'text/css; charset=utf-8' },
} as const;

/**
 * Reads the dashboard's files from `dir` (they ship beside the gateway's code; see
 * scripts/bundle.mjs). Throws naming the first missing file, so a broken install is visible at start.
 */
export function readAdminAssets(dir: string): Map<string, AdminAsset> {
  const assets = new Map<string, AdminAsset>();
  for (const [name, { file, contentType }] of Object.entries(FILES)) {
    assets.set(name, { body: readFileSync(join(dir, file)), contentType });
  }
  return assets;
}
