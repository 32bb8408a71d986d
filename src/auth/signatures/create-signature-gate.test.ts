import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MappingConfig } from '../../config/index.js';
import { signGithub, signStripe } from '../../../test/helpers/sign-webhooks.js';
import { createSignatureGate } from './create-signature-gate.js';

const mappings: MappingConfig[] = [
  { id: 'gh', match: { path: 'github' }, verify: { kind: 'github', secret: 'gh' } },
  { id: 'plain', match: { path: 'plain' } },
  { match: { path: 'billing' }, verify: { kind: 'stripe', secret: 'st', required: true } },
  { id: 'any', verify: { kind: 'github', secret: 'any' } },
];
const gate = createSignatureGate(mappings);
const body = '{"id":"evt_9"}';

describe('createSignatureGate', () => {
  it('finds the mappings with verify that may serve a name, from the path alone', () => {
    assert.deepEqual(
      gate.candidatesFor('github').map((c) => c.id),
      ['gh', 'any'],
    );
    assert.deepEqual(
      gate.candidatesFor('/billing/').map((c) => [c.id, c.kind, c.required]),
      [
        ['mappings[2]', 'stripe', true],
        ['any', 'github', false],
      ],
    );
    assert.deepEqual(
      gate.candidatesFor('plain').map((c) => c.id),
      ['any'],
    );
  });

  it('never offers signatures on the built-in endpoints', () => {
    assert.deepEqual(gate.candidatesFor('wake'), []);
    assert.deepEqual(gate.candidatesFor('/agent'), []);
  });

  it('names every mapping whose key verified the request, with the delivery id', () => {
    const r = gate.verify(gate.candidatesFor('github'), {
      headers: signGithub('gh', body, 'd-1'),
      rawBody: Buffer.from(body),
      nowMs: 0,
    });
    assert.deepEqual(r, { ok: true, signedBy: { mappingIds: ['gh'], kinds: ['github'], deliveryId: 'd-1' } });
  });

  it('refuses with the reasons when no candidate verifies', () => {
    const r = gate.verify(gate.candidatesFor('billing'), {
      headers: signStripe('nope', body, 100),
      rawBody: Buffer.from(body),
      nowMs: 100_000,
    });
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, /Stripe-Signature does not match the body; missing X-Hub-Signature-256/);
  });

  it('names the mapping whose key cannot be decoded', () => {
    assert.throws(
      () => createSignatureGate([{ verify: { kind: 'standard-webhooks', secret: 'whsec_%%' } }]),
      /hooks\.mappings\[0\]\.verify/,
    );
  });
});
