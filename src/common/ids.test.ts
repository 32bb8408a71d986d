import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createIds, generateToken } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createIds', () => {
  it('makes RFC 9562 version-7 UUIDs carrying the time', () => {
    const ids = createIds(() => 0x0123456789ab);
    const id = ids.next();
    assert.match(id, UUID_V7);
    assert.equal(id.replace(/-/g, '').slice(0, 12), '0123456789ab');
  });

  it('writes the whole 48-bit time, the counter in rand_a and random bits that differ from id to id', () => {
    const ids = createIds(() => 0xfedcba987654);
    const made = [ids.next(), ids.next(), ids.next()];
    // Read after all three were made: each id is a value, not a view of the buffer the next one reuses.
    assert.deepEqual(
      made.map((id) => id.slice(0, 18)),
      ['fedcba98-7654-7000', 'fedcba98-7654-7001', 'fedcba98-7654-7002'],
    );
    for (const id of made) assert.match(id, UUID_V7);
    assert.equal(new Set(made.map((id) => id.slice(19))).size, 3, 'the random parts differ');
    const early = createIds(() => 1).next();
    assert.equal(early.slice(0, 13), '00000000-0001');
  });

  it('stays strictly increasing within one millisecond and when the clock goes back', () => {
    let now = 1_000_000;
    const ids = createIds(() => now);
    const made: string[] = [];
    for (let i = 0; i < 5000; i++) {
      if (i === 2500) now -= 10;
      made.push(ids.next());
    }
    for (let i = 1; i < made.length; i++) assert.ok(made[i - 1]! < made[i]!, `${made[i - 1]} < ${made[i]}`);
    assert.equal(new Set(made).size, made.length);
    for (const id of made) assert.match(id, UUID_V7);
  });
});

describe('generateToken', () => {
  it('makes distinct url-safe tokens with 256 bits', () => {
    const a = generateToken();
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, generateToken());
  });
});
