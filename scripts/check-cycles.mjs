// Finds import cycles between the project's own modules, type imports included: every static
// `import … from`, `import type … from`, `export … from` and side-effect `import '…'` of a relative
// path counts. Run by `npm test`; exits 1 and prints each cycle when there is one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SPECIFIER = /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(?:ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The module graph of the `.ts` files under `roots`: file → the project files it imports. */
export function importGraph(roots) {
  const graph = new Map();
  for (const file of roots.flatMap((r) => sourceFiles(resolve(r)))) {
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
    const deps = new Set();
    for (const [, spec] of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), spec)
        .replace(/\.js$/, '.ts')
        .replace(/\.mjs$/, '.mts');
      if (target !== file) deps.add(target);
    }
    graph.set(file, deps);
  }
  for (const deps of graph.values()) for (const d of deps) if (!graph.has(d)) deps.delete(d);
  return graph;
}

/** Every strongly connected group of two or more modules (or one importing itself), as a path. */
export function findCycles(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const cycles = [];
  const visit = (v) => {
    const s = { index, low: index, onStack: true };
    index += 1;
    state.set(v, s);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      const t = state.get(w);
      if (t === undefined) {
        visit(w);
        s.low = Math.min(s.low, state.get(w).low);
      } else if (t.onStack) s.low = Math.min(s.low, t.index);
    }
    if (s.low === s.index) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        state.get(w).onStack = false;
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || graph.get(v)?.has(v)) cycles.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!state.has(v)) visit(v);
  return cycles;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const roots = process.argv.slice(2);
  const graph = importGraph(roots.length > 0 ? roots : ['src', 'bench', 'test']);
  const cycles = findCycles(graph);
  for (const group of cycles) console.error(`import cycle: ${group.map((f) => relative('.', f)).join(' ⇄ ')}`);
  if (cycles.length > 0) process.exit(1);
  console.log(`no import cycle among ${graph.size} modules`);
}
