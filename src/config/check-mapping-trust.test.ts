import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MappingConfig } from './schema.js';
import { checkMappingTrust } from './check-mapping-trust.js';

const RISKY: MappingConfig = { id: 'relay', allowUnsafeExternalContent: true, to: '{{payload.reply_to}}' };

const issueOf = (m: MappingConfig) => checkMappingTrust(m, 3).issue;

describe('checkMappingTrust', () => {
  it('refuses an unverified sender with unwrapped content and a recipient taken from the payload, naming each part', () => {
    const issue = issueOf(RISKY);
    assert.equal(issue?.path, 'hooks.mappings[3]');
    assert.match(issue?.message ?? '', /^mapping "relay": /);
    assert.match(issue?.message ?? '', /no verify: anyone holding the hook token can send it/);
    assert.match(issue?.message ?? '', /allowUnsafeExternalContent: true/);
    assert.match(issue?.message ?? '', /drawn from the request \(to: "\{\{payload\.reply_to\}\}"\)/);
    assert.match(issue?.message ?? '', /acceptRisk: \["exfiltration"\]/);
  });

  const refused: Array<[string, MappingConfig]> = [
    ['a recipient from a header', { ...RISKY, to: 'user-{{headers.x-user}}' }],
    ['a recipient from the query', { ...RISKY, to: '{{query.to}}' }],
    ['a transform, which may set the target', { allowUnsafeExternalContent: true, transform: { module: 't.js' } }],
    ['returnReply', { allowUnsafeExternalContent: true, waitForCompletion: true, returnReply: true }],
    ['verify without required (the hook token still opens it)', { ...RISKY, verify: { kind: 'github', secret: 's' } }],
    ['a wake whose transform may make it a run', { ...RISKY, action: 'wake', transform: { module: 't.js' } }],
  ];
  for (const [name, mapping] of refused) {
    it(`refuses the combination with ${name}`, () => assert.notEqual(issueOf(mapping), null));
  }

  const allowed: Array<[string, MappingConfig]> = [
    ['a signature required', { ...RISKY, verify: { kind: 'github', secret: 's', required: true } }],
    ['the content wrapped', { ...RISKY, allowUnsafeExternalContent: false }],
    ['a fixed recipient', { ...RISKY, to: '12345' }],
    ['a recipient with only the time in it', { ...RISKY, to: 'log-{{now}}' }],
    ['no delivery', { ...RISKY, deliver: false }],
    ['a wake', { ...RISKY, action: 'wake' }],
    ['waiting without the reply', { allowUnsafeExternalContent: true, waitForCompletion: true }],
  ];
  for (const [name, mapping] of allowed) {
    it(`accepts it with ${name}`, () => assert.equal(issueOf(mapping), null));
  }

  it('turns the refusal into a warning when acceptRisk names exfiltration', () => {
    const r = checkMappingTrust({ ...RISKY, acceptRisk: ['exfiltration'] }, 0);
    assert.equal(r.issue, null);
    assert.equal(r.warning?.path, 'hooks.mappings[0].acceptRisk');
    assert.match(r.warning?.message ?? '', /Accepted/);
  });

  it('warns about acceptRisk on a mapping that does not run the risk', () => {
    const r = checkMappingTrust({ id: 'calm', acceptRisk: ['exfiltration'] }, 1);
    assert.equal(r.issue, null);
    assert.match(r.warning?.message ?? '', /mapping "calm" does not run the exfiltration risk/);
  });
});
