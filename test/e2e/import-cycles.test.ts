import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface CycleChecker {
  importGraph(roots: string[]): Map<string, Set<string>>;
  findCycles(graph: Map<string, Set<string>>): string[][];
}
// The checker `npm test` runs over src, bench and test (a plain script, so loaded by path).
const checkerPath = new URL('../../../scripts/check-cycles.mjs', import.meta.url).href;
const { importGraph, findCycles } = (await import(checkerPath)) as CycleChecker;

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('import cycle check', () => {
  it('finds a cycle made of type imports and re-exports', () => {
    const dir = tree({
      'store/types.ts': "export type * from './log-types.js';\nexport interface Claimed { id: string }\n",
      'store/log-types.ts': "import type { Claimed } from './types.js';\nexport type Log = Claimed;\n",
      'config/index.ts': "import { x } from '../policy/rule.js';\nexport const y = x;\n",
      'policy/rule.ts':
        "import type {\n  Config,\n} from '../config/index.js';\nexport const x = 1 as unknown as Config;\n",
      'free.ts': "// import { y } from './config/index.js';\nimport './store/types.js';\n",
    });
    try {
      const cycles = findCycles(importGraph([dir])).map((g) => g.map((f) => f.slice(dir.length + 1)));
      assert.deepEqual(cycles.sort(), [
        ['config/index.ts', 'policy/rule.ts'],
        ['store/log-types.ts', 'store/types.ts'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds none in a tree that only imports downward', () => {
    const dir = tree({
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "import type { C } from './c.js';\nexport const b = 1 as unknown as C;\n",
      'c.ts': 'export type C = number;\n',
    });
    try {
      const graph = importGraph([dir]);
      assert.equal(graph.size, 3);
      assert.deepEqual(findCycles(graph), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds none in the gateway itself', () => {
    const root = new URL('../../../', import.meta.url).pathname;
    const cycles = findCycles(importGraph(['src', 'bench', 'test'].map((d) => join(root, d))));
    assert.deepEqual(cycles, []);
  });
});
