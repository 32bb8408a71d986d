/**
 * What a SQLite gateway loads of the shipped bundle holds only what it uses (the PostgreSQL driver
 * is a chunk of its own, loaded by a PostgreSQL store), and the bundle's files are ASCII: V8 keeps a script's source for as long as the script
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

  it('loads neither the PostgreSQL driver, zod locales but English, nor pino transports at start', () => {
    const dir = dirname(MAIN_JS);
    // main.js and every chunk it imports statically, as Node loads them before running it.
    const seen = new Set<string>();
    const visit = (name: string): void => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const m of readFileSync(join(dir, name), 'utf8').matchAll(
        /^\s*(?:import|export)\b[^;]*?from\s*"\.\/([^"]+)"/gm,
      ))
        visit(m[1]!);
    };
    visit('main.js');
    const loaded = [...seen].map((name) => readFileSync(join(dir, name), 'utf8')).join('\n');
    for (const unused of ['node_modules/pg/', 'node_modules/pg-protocol/', 'zod/v4/locales/fr.js', 'thread-stream'])
      assert.ok(!loaded.includes(unused), `${unused} is in what main.js loads (${[...seen].join(', ')})`);
    assert.ok(loaded.includes('zod/v4/locales/en.js'), 'the English messages are there');
    const all = readdirSync(dir).filter((n) => n.endsWith('.js'));
    const pgChunk = all.find((n) => readFileSync(join(dir, n), 'utf8').includes('node_modules/pg/lib/index.js'));
    assert.ok(pgChunk !== undefined && !seen.has(pgChunk), 'the driver is in a chunk loaded on demand');
  });
});
