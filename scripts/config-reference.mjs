// Writes docs/configuration-reference.md from the config schema, as compiled in dist/ (`npm run
// docs:config` compiles first). src/config/render-config-reference.test.ts fails while the
// committed file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { renderConfigReference } from '../dist/src/config/render-config-reference.js';

const target = new URL('../docs/configuration-reference.md', import.meta.url);
writeFileSync(target, renderConfigReference());
console.log(`wrote ${target.pathname}`);
