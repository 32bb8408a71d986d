import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CONFIG_REFERENCE_COMMAND, listConfigKeys, renderConfigReference } from './render-config-reference.js';

/** The committed reference, from the repository root (tests run from `dist/src/config/`). */
const REFERENCE = new URL('../../../docs/configuration-reference.md', import.meta.url);

describe('the configuration reference', () => {
  it('is what the schema renders now', () => {
    const committed = readFileSync(REFERENCE, 'utf8');
    assert.ok(
      committed === renderConfigReference(),
      `docs/configuration-reference.md differs from the schema: run \`${CONFIG_REFERENCE_COMMAND}\` and commit it`,
    );
  });

  it('describes every key of the schema', () => {
    const bare = listConfigKeys()
      .filter((k) => k.description.trim() === '')
      .map((k) => k.path);
    assert.deepEqual(bare, [], 'each of these keys needs a .describe() in src/config/');
  });

  it('renders a key with its type, its default and its description, a tagged default too', () => {
    const schema = z.strictObject({
      section: z
        .strictObject({
          count: z.number().int().min(1).max(9).default(3).describe('How many.'),
          mode: z.enum(['a', 'b']).optional().describe('Which. @default `a` or the `b` of the parent'),
          url: z.url().optional().describe('Where.'),
        })
        .describe('A section.'),
    });
    const text = renderConfigReference(schema);
    assert.match(text, /^## `section`\n\nA section\.\n/m);
    assert.ok(text.includes('| `count` | integer 1 to 9 | `3` | How many. |'), text);
    assert.ok(text.includes('| `mode` | `a` or `b` | `a` or the `b` of the parent | Which. |'), text);
    assert.ok(text.includes('| `url` | URL |  | Where. |'), text);
  });

  it('gives each kind of a tagged union a section of its own, without the tag as a key', () => {
    const schema = z.strictObject({
      store: z
        .discriminatedUnion('driver', [
          z.strictObject({ driver: z.literal('one'), path: z.string().describe('A path.') }).describe('The first.'),
          z.strictObject({ driver: z.literal('two'), url: z.string().describe('A URL.') }).describe('The second.'),
        ])
        .describe('Where.'),
    });
    const text = renderConfigReference(schema);
    assert.ok(text.includes('| `store` | object, by `driver` (below) |  | Where. |'), text);
    assert.match(text, /## `store` with `driver: "one"`\n\nThe first\.\n[^#]*\| `path` \| string \|/);
    assert.match(text, /## `store` with `driver: "two"`\n\nThe second\.\n[^#]*\| `url` \| string \|/);
    assert.equal(text.includes('| `driver` |'), false);
  });
});
