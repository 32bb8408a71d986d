import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { MAIN } from '../../../test/helpers/store-records.js';
import { writePendingEvents } from '../../../test/helpers/write-pending-events.js';
import { createDigestReader } from './read-digest.js';

interface Row {
  seq: number;
  hook: string | null;
  text: string;
}

/**
 * The digest's counts worked out from every row, the slow way: the shape is the text without
 * digits, 40 characters (code points); each hook's largest kind ranks ahead of every other kind,
 * and `max(groups, min(hooks, that many hooks))` kinds are shown.
 */
function expected(
  rows: readonly Row[],
  groups: number,
  hooks: number,
): {
  total: number;
  kinds: number;
  byHook: Array<{ hook: string | null; count: number }>;
  groups: Array<[number, number]>;
} {
  const byHook = new Map<string | null, number>();
  const byShape = new Map<string, { hook: string | null; seq: number; n: number }>();
  for (const r of rows) {
    byHook.set(r.hook, (byHook.get(r.hook) ?? 0) + 1);
    const key = JSON.stringify([r.hook, Array.from(r.text.replace(/[0-9]/g, '')).slice(0, 40).join('')]);
    const g = byShape.get(key) ?? { hook: r.hook, seq: 0, n: 0 };
    byShape.set(key, { hook: r.hook, seq: Math.max(g.seq, r.seq), n: g.n + 1 });
  }
  const ranked = [...byShape.values()].sort((a, b) => b.n - a.n || b.seq - a.seq);
  const firsts = ranked.filter((g, i) => ranked.findIndex((o) => o.hook === g.hook) === i);
  const shown = [...firsts, ...ranked.filter((g) => !firsts.includes(g))].slice(
    0,
    Math.max(groups, Math.min(firsts.length, hooks)),
  );
  const bytes = (h: string | null): Buffer => Buffer.from(h ?? '', 'utf8');
  return {
    total: rows.length,
    kinds: byShape.size,
    byHook: [...byHook]
      .sort(([ha, a], [hb, b]) => b - a || (ha === null ? -1 : hb === null ? 1 : Buffer.compare(bytes(ha), bytes(hb))))
      .map(([hook, count]) => ({ hook, count })),
    groups: shown.map((g) => [g.seq, g.n]),
  };
}

describe('the SQLite digest reader', () => {
  let f: SqliteFixture;
  beforeEach(async () => {
    f = await createSqliteFixture();
  });
  afterEach(() => f.dispose());

  /** Writes `rows` as pending events of the main session beside the open store; returns them with their `seq`. */
  const write = (rows: ReadonlyArray<Omit<Row, 'seq'>>): Row[] => {
    const seqs = writePendingEvents(
      f.path,
      rows.map((r, i) => ({
        id: `ev-${i}`,
        text: r.text,
        source: JSON.stringify(r.hook === null ? { external: true } : { hook: r.hook, external: true }),
        createdAt: i,
      })),
    );
    return rows.map((r, i) => ({ ...r, seq: seqs[i]! }));
  };

  it('counts by hook and groups alike events in one pass, as a count over every row does', () => {
    const hooks = ['gmail', 'github', 'ci', null, 'zürich', '\u{1F600}-alerts', '\uFF21-alerts'];
    const rows = write(
      Array.from({ length: 3_000 }, (_, i) => ({
        // Hooks with equal counts (ordered by name, NULL first, by UTF-8 bytes: U+FF21 before U+1F600,
        // which UTF-16 units order the other way), and groups of equal size (the newest first).
        hook: hooks[i % 7]!,
        text:
          i % 5 === 0
            ? `Build ${i} failed on main`
            : `Mail ${i % 13} from ${'abcdefghij'[i % 10]}: ${'é'.repeat(i % 4)} ${'x'.repeat(45)}`,
      })),
    );
    const seqOf = new Map(rows.map((r, i) => [`ev-${i}`, r.seq]));
    const read = createDigestReader(f.raw);
    for (const [groups, hooks] of [
      [0, 50],
      [1, 50],
      [1, 3],
      [5, 0],
      [15, 50],
      [5_000, 50],
    ] as const) {
      const digest = read(MAIN, { groups, hooks, newest: 2, high: 0 })!;
      const want = expected(rows, groups, hooks);
      assert.equal(digest.total, want.total);
      assert.equal(digest.kinds, want.kinds);
      assert.deepEqual(digest.byHook, want.byHook);
      assert.deepEqual(
        digest.groups.map((g) => [seqOf.get(g.sample.id), g.count]),
        want.groups,
        `groups: ${groups}, hooks: ${hooks}`,
      );
      assert.deepEqual(
        digest.newest.map((e) => e.text),
        [rows.at(-1)!.text, rows.at(-2)!.text],
      );
    }
  });

  it('has nothing to digest in a session without pending events', () => {
    write([{ hook: 'gmail', text: 'one' }]);
    assert.equal(createDigestReader(f.raw)('agent:other:main', { groups: 5, hooks: 50, newest: 5, high: 20 }), null);
  });
});
