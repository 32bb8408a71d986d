/**
 * What a SQLite gateway loads of the shipped bundle holds only what it uses (the PostgreSQL driver
 * is a chunk of its own, loaded by a PostgreSQL store), and the bundle's files are ASCII: V8 keeps
 * a script's source for as long as the script lives, one byte a character when every character is
 * ASCII and two otherwise, so one dash left in a comment of `main.js` costs the gateway about 1.8 MB
 * of heap (`scripts/bundle.mjs` escapes them).
 *
 * And they load nothing from `node_modules` but the package's own `dependencies`: the libraries the
 * bundle holds are devDependencies, which `npm install -g hookgate` does not install.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { MAIN_JS } from '../helpers/gateway-process.js';

/** pg's optional native binding, required only when `pg.native` is read, which the store never does. */
const NEVER_LOADED = new Set(['pg-native']);
const PACKAGE_JSON = new URL('../../../package.json', import.meta.url);
/** `from "x"`, `import("x")` and `require("x")` (esbuild's `__require`) of a bare specifier. */
const BARE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\(\s*)["']([^"'./][^"']*)["']/g;

const packageName = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe('the shipped bundle', () => {
  it('loads only Node built-ins and the runtime dependencies from outside itself', () => {
    const { dependencies } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { dependencies: Record<string, string> };
    const dir = dirname(MAIN_JS);
    const outside = new Set<string>();
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
      for (const [, specifier] of readFileSync(join(dir, name), 'utf8').matchAll(BARE_IMPORT)) {
        if (isBuiltin(specifier!) || NEVER_LOADED.has(specifier!)) continue;
        outside.add(`${name}: ${packageName(specifier!)}`);
      }
    }
    const undeclared = [...outside].filter((entry) => !(entry.split(': ')[1]! in dependencies));
    assert.deepEqual(undeclared, [], 'every package the bundle loads is in package.json dependencies');
    assert.ok(outside.has('main.js: better-sqlite3'), 'the scan finds the one dependency main.js is known to load');
  });

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
