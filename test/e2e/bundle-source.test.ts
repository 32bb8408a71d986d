/**
 * The shipped bundle's files are ASCII: V8 keeps a script's source for as long as the script
 * lives, one byte a character when every character is ASCII and two otherwise, so one dash left in
 * a comment of `main.js` costs the gateway about 1.8 MB of heap (`scripts/bundle.mjs` escapes them).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MAIN_JS } from '../helpers/gateway-process.js';

describe('the shipped bundle', () => {
  it('is ASCII in every script, so V8 holds its source one byte a character', () => {
    const dir = dirname(MAIN_JS);
    const scripts = readdirSync(dir).filter((n) => n.endsWith('.js'));
    assert.ok(scripts.includes('main.js'), `main.js is in ${dir}`);
    for (const name of scripts) {
      const text = readFileSync(join(dir, name), 'utf8');
      const at = text.search(/\P{ASCII}/u);
      assert.equal(at, -1, `${name}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`);
    }
  });
});
