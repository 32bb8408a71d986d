import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { HooksSchema, type HooksConfig } from '../../config/index.js';
import {
  compileMappings,
  DEFAULT_TRANSFORM_MAX_MEMORY_MB,
  DEFAULT_TRANSFORM_TIMEOUT_MS,
  isPlainRelative,
  matchMapping,
  RESERVED_HOOK_NAMES,
  trimSlashes,
} from './compile-mappings.js';

const DIR = join('/srv', 'hookgate', 'hooks', 'transforms');

/** A hooks section as the config loader would produce it. */
function hooks(raw: Record<string, unknown>): HooksConfig {
  return HooksSchema.parse({ enabled: true, token: 'unit-test-token', ...raw });
}

/** The id of the mapping `name` + `payload` resolves to, or `undefined`. */
function matchedId(
  raw: Record<string, unknown>,
  name: string,
  payload: Record<string, unknown> = {},
  headers: Record<string, string | string[]> = {},
): string | undefined {
  return matchMapping(compileMappings(hooks(raw), DIR), name, payload, headers)?.id;
}

describe('matchMapping', () => {
  it('matches on headers: names in any case, one value or a list, every header required', () => {
    const mappings = [
      { id: 'ping', match: { path: 'github', headers: { 'X-GitHub-Event': 'ping' } } },
      { id: 'code', match: { path: 'github', headers: { 'x-github-event': ['push', 'pull_request'] } } },
      { id: 'both', match: { path: 'two', headers: { 'x-a': '1', 'x-b': '2' } } },
      { id: 'rest', match: { path: 'github' } },
    ];
    assert.equal(matchedId({ mappings }, 'github', {}, { 'x-github-event': 'ping' }), 'ping');
    assert.equal(matchedId({ mappings }, 'github', {}, { 'x-github-event': 'pull_request' }), 'code');
    assert.equal(matchedId({ mappings }, 'github', {}, { 'x-github-event': ['issues', 'push'] }), 'code');
    assert.equal(matchedId({ mappings }, 'github', {}, { 'x-github-event': 'Ping' }), 'rest', 'values are exact');
    assert.equal(matchedId({ mappings }, 'github', {}, {}), 'rest', 'a missing header does not match');
    assert.equal(matchedId({ mappings }, 'two', {}, { 'x-a': '1' }), undefined);
    assert.equal(matchedId({ mappings }, 'two', {}, { 'x-a': '1', 'x-b': '2' }), 'both');
  });

  it('takes the first matching mapping, in config order', () => {
    const mappings = [
      { id: 'first', match: { path: 'dup' } },
      { id: 'second', match: { path: 'dup' } },
    ];
    assert.equal(matchedId({ mappings }, 'dup'), 'first');
  });

  it('skips earlier mappings that do not match', () => {
    const mappings = [
      { id: 'other', match: { path: 'other' } },
      { id: 'wanted', match: { path: 'dup' } },
      { id: 'later', match: { path: 'dup' } },
    ];
    assert.equal(matchedId({ mappings }, 'dup'), 'wanted');
  });

  it('tries user mappings before presets: a user mapping at "gmail" beats the gmail preset', () => {
    assert.equal(
      matchedId({ presets: ['gmail'], mappings: [{ id: 'mine', match: { path: 'gmail' } }] }, 'gmail'),
      'mine',
    );
  });

  it('falls through to the gmail preset when no user mapping matches', () => {
    assert.equal(
      matchedId({ presets: ['gmail'], mappings: [{ id: 'mine', match: { path: 'other' } }] }, 'gmail'),
      'gmail',
    );
  });

  it('has no gmail mapping unless the preset is enabled', () => {
    assert.equal(matchedId({}, 'gmail'), undefined);
  });

  const paths: Array<[string, string, string, boolean]> = [
    ['same name', 'github', 'github', true],
    ['leading slash in match.path', '/github', 'github', true],
    ['trailing slash in match.path', 'github/', 'github', true],
    ['both, several times', '//github//', 'github', true],
    ['slashes around the called name', 'github', '/github/', true],
    ['nested names', '/ci/builds/', 'ci/builds', true],
    ['case differs', 'github', 'GitHub', false],
    ['case differs in match.path', 'GitHub', 'github', false],
    ['prefix only', 'git', 'github', false],
    ['longer name', 'github', 'github/extra', false],
  ];
  for (const [what, matchPath, name, want] of paths) {
    it(`match.path "${matchPath}" vs name "${name}" (${what}): ${want ? 'matches' : 'no match'}`, () => {
      assert.equal(matchedId({ mappings: [{ id: 'm', match: { path: matchPath } }] }, name), want ? 'm' : undefined);
    });
  }

  const sources: Array<[string, unknown, boolean]> = [
    ['equal string', 'ci', true],
    ['different string', 'alerts', false],
    ['different case', 'CI', false],
    ['surrounding spaces', ' ci ', false],
    ['absent', undefined, false],
    ['null', null, false],
    ['a number', 7, false],
    ['an array holding the value', ['ci'], false],
    ['an object', { name: 'ci' }, false],
    ['a boolean', true, false],
  ];
  for (const [what, source, want] of sources) {
    it(`match.source "ci" vs payload source ${what}: ${want ? 'matches' : 'no match'}`, () => {
      const payload: Record<string, unknown> = source === undefined ? {} : { source };
      assert.equal(
        matchedId({ mappings: [{ id: 'm', match: { path: 'ingest', source: 'ci' } }] }, 'ingest', payload),
        want ? 'm' : undefined,
      );
    });
  }

  it('compares a numeric match.source only with a string source', () => {
    const raw = { mappings: [{ id: 'm', match: { source: '7' } }] };
    assert.equal(matchedId(raw, 'x', { source: 7 }), undefined);
    assert.equal(matchedId(raw, 'x', { source: '7' }), 'm');
  });

  it('needs both path and source when both are set', () => {
    const raw = { mappings: [{ id: 'm', match: { path: 'ingest', source: 'ci' } }] };
    assert.equal(matchedId(raw, 'ingest', { source: 'ci' }), 'm');
    assert.equal(matchedId(raw, 'other', { source: 'ci' }), undefined);
    assert.equal(matchedId(raw, 'ingest', { source: 'alerts' }), undefined);
  });

  it('routes one name by source to different mappings', () => {
    const raw = {
      mappings: [
        { id: 'ci', match: { path: 'ingest', source: 'ci' } },
        { id: 'alerts', match: { path: 'ingest', source: 'alerts' } },
      ],
    };
    assert.equal(matchedId(raw, 'ingest', { source: 'ci' }), 'ci');
    assert.equal(matchedId(raw, 'ingest', { source: 'alerts' }), 'alerts');
    assert.equal(matchedId(raw, 'ingest', { source: 'billing' }), undefined);
  });

  it('matches any name with a source-only mapping', () => {
    const raw = { mappings: [{ id: 'deploys', match: { source: 'deploy' } }] };
    for (const name of ['a', 'b/c', 'gmail']) assert.equal(matchedId(raw, name, { source: 'deploy' }), 'deploys', name);
    assert.equal(matchedId(raw, 'a', {}), undefined);
  });

  it('matches everything with a mapping that has no match criteria', () => {
    const raw = { mappings: [{ id: 'catch-all' }] };
    assert.equal(matchedId(raw, 'anything', {}), 'catch-all');
    assert.equal(matchedId({ mappings: [{ id: 'empty', match: {} }] }, 'anything', { source: 1 }), 'empty');
  });

  it('returns undefined when nothing matches', () => {
    assert.equal(matchedId({ mappings: [{ id: 'm', match: { path: 'a' } }] }, 'b'), undefined);
    assert.equal(matchedId({}, 'b'), undefined);
  });
});

describe('compileMappings', () => {
  it('names mappings by id, else by position, and puts presets last', () => {
    const compiled = compileMappings(
      hooks({
        presets: ['gmail'],
        mappings: [{ id: 'named', match: { path: 'a' } }, { match: { path: 'b' } }],
      }),
      DIR,
    );
    assert.deepEqual(
      compiled.map((m) => m.id),
      ['named', 'mappings[1]', 'gmail'],
    );
    assert.deepEqual(
      compiled.map((m) => m.matchPath),
      ['a', 'b', 'gmail'],
    );
  });

  it('resolves a transform inside the transforms directory with the default export, timeout, memory cap and result cap', () => {
    const [m] = compileMappings(
      hooks({ mappings: [{ match: { path: 'a' }, transform: { module: 'sub/shape.ts' } }] }),
      DIR,
    );
    assert.deepEqual(m?.transform, {
      key: 'mappings[0]',
      file: join(DIR, 'sub', 'shape.ts'),
      exportName: 'default',
      timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS,
      maxMemoryMb: DEFAULT_TRANSFORM_MAX_MEMORY_MB,
      maxResultBytes: 256 * 1024,
      env: {},
    });
    assert.equal(DEFAULT_TRANSFORM_TIMEOUT_MS, 5000);
    assert.equal(DEFAULT_TRANSFORM_MAX_MEMORY_MB, 128);
  });

  it('keeps a named export, timeout, memory cap and environment, keys the worker by mapping id and caps results at maxBodyBytes', () => {
    const [m] = compileMappings(
      hooks({
        maxBodyBytes: 4096,
        mappings: [
          {
            id: 'shape',
            match: { path: 'a' },
            transform: {
              module: 'shape.js',
              export: 'toAction',
              timeoutMs: 250,
              maxMemoryMb: 32,
              env: { GITHUB_TOKEN: 'ghp-value' },
            },
          },
        ],
      }),
      DIR,
    );
    assert.deepEqual(m?.transform, {
      key: 'shape',
      file: join(DIR, 'shape.js'),
      exportName: 'toAction',
      timeoutMs: 250,
      maxMemoryMb: 32,
      maxResultBytes: 4096,
      env: { GITHUB_TOKEN: 'ghp-value' },
    });
  });

  it('refuses a transform memory cap below 16 MB', () => {
    assert.throws(() =>
      hooks({ mappings: [{ match: { path: 'a' }, transform: { module: 'shape.js', maxMemoryMb: 8 } }] }),
    );
  });

  it('has no transform and no shape check for a plain user mapping', () => {
    const [m] = compileMappings(hooks({ mappings: [{ match: { path: 'a' } }] }), DIR);
    assert.equal(m?.transform, undefined);
    assert.equal(m?.validate, undefined);
  });

  it('gives the gmail preset a shape check', () => {
    const [m] = compileMappings(hooks({ presets: ['gmail'] }), DIR);
    assert.equal(typeof m?.validate, 'function');
  });
});

describe('trimSlashes', () => {
  const cases: Array<[string, string]> = [
    ['github', 'github'],
    ['/github', 'github'],
    ['github/', 'github'],
    ['///a/b///', 'a/b'],
    ['/', ''],
    ['', ''],
  ];
  for (const [input, want] of cases) it(`"${input}" → "${want}"`, () => assert.equal(trimSlashes(input), want));
});

describe('isPlainRelative', () => {
  const cases: Array<[string, boolean]> = [
    ['shape.js', true],
    ['sub/shape.ts', true],
    ['./shape.js', true],
    ['..shape.js', true],
    ['/etc/shape.js', false],
    ['../escape.js', false],
    ['sub/../../escape.js', false],
    ['sub\\..\\..\\escape.js', false],
    ['sub/..', false],
  ];
  for (const [module, want] of cases) it(`"${module}" → ${want}`, () => assert.equal(isPlainRelative(module), want));
});

describe('RESERVED_HOOK_NAMES', () => {
  it('holds the built-in endpoints', () => {
    assert.deepEqual([...RESERVED_HOOK_NAMES].sort(), ['agent', 'wake']);
  });
});
