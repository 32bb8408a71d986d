// Bundles the compiled gateway into one module (plus the transform worker, the SQLite checkpoint
// and read workers, the MCP Events webhook worker and the TypeScript loader hooks, which are loaded by URL),
// so starting it reads two files instead of a few hundred: about half the startup time.
// What a gateway imports only when it needs it (the PostgreSQL store and its driver) goes into a
// chunk of its own beside it, so a SQLite gateway never parses it.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

/**
 * Modules the gateway never uses, replaced by stubs: every zod locale but English (360 KB of
 * messages; only `en` is ever configured), pino's worker-thread transports (the gateway writes
 * to stderr itself) and OpenTelemetry, which prom-client loads only for exemplars (not enabled).
 */
const STUBS = [
  { filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/, contents: 'export { default as en } from "./en.js";' },
  {
    filter: /pino[\\/]lib[\\/]transport\.js$/,
    contents: 'module.exports = () => { throw new Error("pino transports are not part of the hookgate bundle"); };',
  },
  {
    filter: /@opentelemetry[\\/]api[\\/]/,
    contents: 'module.exports = { trace: { getSpan: () => undefined }, context: { active: () => undefined } };',
  },
];

const stubs = {
  name: 'stubs',
  setup(b) {
    for (const { filter, contents } of STUBS) {
      b.onLoad({ filter }, (args) => ({ contents, loader: 'js', resolveDir: args.path.replace(/[\\/][^\\/]*$/, '') }));
    }
  },
};

rmSync('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: {
    main: 'dist/src/main.js',
    // Loaded by URL beside the module that uses them, so they stay files of their own.
    'ts-loader-hooks': 'dist/src/hooks/transforms/ts-loader-hooks.js',
    'transform-worker': 'dist/src/hooks/transforms/transform-worker.js',
    'checkpoint-worker': 'dist/src/store/sqlite/checkpoint-worker.js',
    'read-worker': 'dist/src/store/sqlite/read-worker.js',
    'webhook-worker': 'dist/src/outputs/mcp-events/webhook-worker.js',
  },
  outdir: 'dist/bundle',
  bundle: true,
  // A dynamic import becomes a chunk loaded when it runs; code the entry points share goes to chunks too.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  plugins: [stubs],
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The native addon and the loader-thread compiler stay outside, as the package's only runtime
  // dependencies; every other library is bundled and so only a devDependency.
  external: ['better-sqlite3', 'amaro'],
  logLevel: 'warning',
  // CommonJS dependencies bundled into ESM (pino) call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __hookgateCreateRequire } from 'node:module'; const require = __hookgateCreateRequire(import.meta.url);",
  },
});

// esbuild escapes what is not ASCII in strings and regular expressions, but keeps the comments it
// carries over as they are: one dash in a comment makes V8 hold the whole bundle's source in two
// bytes a character (about 1.8 MB more of the gateway's heap for main.js). Such characters are
// written as `\u` escapes; one found outside a line comment stops the build.
for (const name of readdirSync('dist/bundle').filter((n) => n.endsWith('.js'))) {
  const path = `dist/bundle/${name}`;
  const text = readFileSync(path, 'utf8');
  if (/^\p{ASCII}*$/u.test(text)) continue;
  const lines = text.split('\n').map((line, i) => {
    const at = line.search(/\P{ASCII}/u);
    if (at === -1) return line;
    const comment = line.indexOf('//');
    if (comment === -1 || comment > at)
      throw new Error(`${path}:${i + 1}: a character that is not ASCII outside a line comment`);
    return line.replace(/\P{ASCII}/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  });
  writeFileSync(path, lines.join('\n'));
}

// The dashboard's static files are served as is, from beside whichever main.js runs: the compiled
// tree (tests) and the bundle (the `hookgate` command).
for (const dir of ['dist/src/admin/static', 'dist/bundle/admin/static'])
  cpSync('src/admin/static', dir, { recursive: true });
