import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSourceEncoder, decodeSource, encodeSource } from './action-source.js';
import type { ActionSource } from './types.js';

describe('encodeSource / decodeSource', () => {
  const every: ActionSource[] = [
    { hook: 'wake', external: true, allowUnsafeExternalContent: false },
    { hook: 'gmail', external: true, allowUnsafeExternalContent: true },
    { hook: 'agent', external: false, allowUnsafeExternalContent: false },
    { hook: 'odd "name"', external: false, allowUnsafeExternalContent: true },
    { hook: 'alerts', external: true, allowUnsafeExternalContent: false, priority: 'high' },
    { hook: 'github', external: true, allowUnsafeExternalContent: false, summary: true },
  ];

  it('reads back every combination of the fields as it was written', () => {
    for (const source of every) assert.deepEqual(decodeSource(encodeSource(source)), source);
  });

  it('leaves out allowUnsafeExternalContent when false, and nothing else', () => {
    assert.equal(encodeSource(every[0]!), '{"hook":"wake","external":true}');
    assert.deepEqual(JSON.parse(encodeSource(every[1]!)), {
      hook: 'gmail',
      external: true,
      allowUnsafeExternalContent: true,
    });
    assert.deepEqual(JSON.parse(encodeSource(every[2]!)), { hook: 'agent', external: false });
    assert.deepEqual(JSON.parse(encodeSource(every[3]!)), {
      hook: 'odd "name"',
      external: false,
      allowUnsafeExternalContent: true,
    });
  });

  it('is read as external, and as not allowing unsafe content, by a reader that fills in nothing', () => {
    // What code from before this encoding does with a stored source: JSON.parse alone.
    const parsed = JSON.parse(encodeSource(every[0]!)) as Partial<ActionSource>;
    assert.equal(parsed.external, true);
    assert.ok(!parsed.allowUnsafeExternalContent);
  });

  it('reads rows written with every field', () => {
    for (const source of every) assert.deepEqual(decodeSource(JSON.stringify(source)), source);
  });

  it('createSourceEncoder writes what encodeSource does, whichever field changed from one source to the next', () => {
    const encode = createSourceEncoder();
    // Each source after each other one, twice over: a change in any one field is a new text.
    const order = every.flatMap((a) => every.flatMap((b) => [a, a, b]));
    for (const source of order) assert.equal(encode({ ...source }), encodeSource(source));
    assert.equal(
      encode({ hook: 'wake', external: false, allowUnsafeExternalContent: false }),
      '{"hook":"wake","external":false}',
    );
    assert.equal(
      encode({ hook: 'wake', external: false, allowUnsafeExternalContent: true }),
      '{"hook":"wake","external":false,"allowUnsafeExternalContent":true}',
    );
    assert.equal(
      encode({ hook: 'wake2', external: false, allowUnsafeExternalContent: true }),
      '{"hook":"wake2","external":false,"allowUnsafeExternalContent":true}',
    );
  });
});
