import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitMessage } from './split-message.js';

function check(text: string, max: number): string[] {
  const parts = splitMessage(text, max);
  assert.equal(parts.join(''), text, 'joined parts give the reply back');
  for (const p of parts) assert.ok(p.length <= max, `part of ${p.length} > ${max}`);
  return parts;
}

describe('splitMessage', () => {
  it('keeps a short reply whole', () => assert.deepEqual(check('hello', 10), ['hello']));
  it('keeps an empty reply as one part', () => assert.deepEqual(splitMessage('', 10), ['']));

  it('cuts at spaces, never inside a word', () => {
    const parts = check('alpha beta gamma delta epsilon', 12);
    const words = new Set(['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    for (const p of parts) for (const w of p.trim().split(' ')) assert.ok(words.has(w), `"${w}" is a whole word`);
  });

  it('prefers a paragraph break, then a line break', () => {
    const text = 'first line\nsecond line\n\nnext paragraph here';
    const parts = check(text, 30);
    assert.equal(parts[0], 'first line\nsecond line\n\n');
    const lines = check('aaaa bbbb\ncccc dddd eeee', 16);
    assert.equal(lines[0], 'aaaa bbbb\n');
  });

  it('keeps a code block whole when it fits a part', () => {
    const code = '```js\nconst x = 1;\nconst y = 2;\n```';
    const text = `Here is the fix for the bug we talked about.\n${code}\nDone.`;
    const parts = check(text, 60);
    assert.ok(
      parts.some((p) => p.includes(code)),
      JSON.stringify(parts),
    );
  });

  it('cuts a code block longer than a part, since it has to', () => {
    const code = `\`\`\`\n${'x'.repeat(100)}\n\`\`\``;
    check(code, 40);
  });

  it('cuts hard when there is no space, without splitting a surrogate pair', () => {
    const parts = check('😀'.repeat(10), 5);
    for (const p of parts) assert.ok(!/[\ud800-\udbff]$/.test(p) && !/^[\udc00-\udfff]/.test(p), JSON.stringify(p));
  });

  const limits: Array<[string, number]> = [
    ['telegram', 4096],
    ['discord', 2000],
    ['slack', 40_000],
    ['mattermost', 16_383],
    ['signal', 2000],
    ['whatsapp', 4096],
    ['imessage', 4000],
    ['msteams', 28_000],
  ];
  for (const [name, max] of limits) {
    it(`splits a long reply for ${name} (${max})`, () => {
      const words = Array.from({ length: Math.ceil((max * 2.5) / 8) }, (_, i) => `w${i}`.padEnd(7, 'x')).join(' ');
      const parts = check(words, max);
      assert.equal(parts.length, 3);
    });
  }
});
