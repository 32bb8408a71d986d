import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError } from '../common/errors.js';
import { ConfigSchema } from '../config/index.js';
import { checkHookCall } from './check-hook-call.js';
import { compileMappings } from './mappings/compile-mappings.js';
import type { MappedHookCall } from './mappings/build-mapped-request.js';

const config = ConfigSchema.parse({
  hooks: {
    enabled: true,
    token: 't',
    mappings: [
      { id: 'github', match: { path: 'github' }, action: 'wake', verify: { kind: 'github', secret: 's' } },
      { id: 'strict', match: { path: 'strict' }, verify: { kind: 'github', secret: 's', required: true } },
    ],
  },
});
const mappings = compileMappings(config.hooks, '/nowhere');
const call = (name: string, payload: Record<string, unknown>, o: Partial<MappedHookCall> = {}): MappedHookCall => ({
  name,
  payload,
  headers: {},
  url: `/hooks/${name}`,
  ...o,
});
const codeOf = (c: MappedHookCall): string | null => {
  try {
    checkHookCall(mappings, c);
    return null;
  } catch (error) {
    assert.ok(error instanceof RequestError);
    return error.code;
  }
};

describe('checkHookCall', () => {
  const cases: Array<[string, MappedHookCall, string | null]> = [
    ['a wake with its text', call('wake', { text: 'hi' }), null],
    ['a wake without text', call('wake', {}), 'invalid_payload'],
    ['an agent call without a message', call('agent', { name: 'x' }), 'invalid_payload'],
    [
      'a signed call to the built-in wake',
      call('wake', { text: 'hi' }, { signedBy: { mappingIds: ['github'] } }),
      'signature_invalid',
    ],
    ['a mapped name signed by its mapping', call('github', {}, { signedBy: { mappingIds: ['github'] } }), null],
    ['a mapped name no mapping serves', call('gitlab', {}), 'hook_not_found'],
    ['a token call to a mapping that requires signatures', call('strict', {}), 'signature_invalid'],
    [
      'a call signed by another mapping',
      call('strict', {}, { signedBy: { mappingIds: ['github'] } }),
      'signature_invalid',
    ],
  ];
  for (const [name, c, want] of cases) {
    it(`answers ${want ?? 'nothing'} for ${name}`, () => assert.equal(codeOf(c), want));
  }
});
