import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { VerifyConfig } from '../../config/index.js';
import {
  createEd25519Keys,
  signGithub,
  signHmac,
  signSlack,
  signStandardWebhooks,
  signStandardWebhooksEd25519,
  signStripe,
  type Headers,
} from '../../../test/helpers/sign-webhooks.js';
import { readTextFixture } from '../../../test/fixtures/read-fixture.js';
import { createSignatureVerifier } from './verify-signature.js';
import { MAX_ENTRIES } from './verify-standard-webhooks.js';
import type { VerifyResult } from './verify-types.js';

const NOW_S = 1_735_819_260;
const NOW_MS = NOW_S * 1000;
const BODY = '{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_paid":4900}}}';
const WHSEC_A = `whsec_${Buffer.from('standard-webhooks-key-a-32-bytes').toString('base64')}`;
const WHSEC_B = `whsec_${Buffer.from('standard-webhooks-key-b-32-bytes').toString('base64')}`;
const ed = createEd25519Keys();
const otherEd = createEd25519Keys();

interface Kind {
  name: string;
  /** Config with two secrets (rotation): `right` signs with the second. */
  spec: VerifyConfig;
  sign: (key: 'first' | 'second' | 'wrong', body: string, unixSeconds: number) => Headers;
  /** Whether the scheme signs a timestamp. */
  timed: boolean;
}

const pick = <T>(key: 'first' | 'second' | 'wrong', first: T, second: T, wrong: T): T =>
  key === 'first' ? first : key === 'second' ? second : wrong;

const KINDS: Kind[] = [
  {
    name: 'github',
    spec: { kind: 'github', secret: ['gh-old-secret', 'gh-new-secret'] },
    sign: (k, b) => signGithub(pick(k, 'gh-old-secret', 'gh-new-secret', 'gh-guess'), b),
    timed: false,
  },
  {
    name: 'stripe',
    spec: { kind: 'stripe', secret: ['whsec_stripeOld', 'whsec_stripeNew'] },
    sign: (k, b, t) => signStripe(pick(k, 'whsec_stripeOld', 'whsec_stripeNew', 'whsec_guess'), b, t),
    timed: true,
  },
  {
    name: 'slack',
    spec: { kind: 'slack', secret: ['8f742231b10e8888abcd99yyyzzz85a5', 'e6b19c573432dcc6b075501d51b51bb8'] },
    sign: (k, b, t) =>
      signSlack(pick(k, '8f742231b10e8888abcd99yyyzzz85a5', 'e6b19c573432dcc6b075501d51b51bb8', 'guess'), b, t),
    timed: true,
  },
  {
    name: 'standard-webhooks v1 (HMAC)',
    spec: { kind: 'standard-webhooks', secret: [WHSEC_A, WHSEC_B] },
    sign: (k, b, t) =>
      signStandardWebhooks(pick(k, WHSEC_A, WHSEC_B, `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`), b, t),
    timed: true,
  },
  {
    name: 'standard-webhooks v1a (Ed25519)',
    spec: { kind: 'standard-webhooks', publicKey: [otherEd.publicKey, ed.publicKey] },
    sign: (k, b, t) =>
      signStandardWebhooksEd25519(pick(k, otherEd.privateKey, ed.privateKey, createEd25519Keys().privateKey), b, t),
    timed: true,
  },
  {
    name: 'hmac (sha256, hex, prefix)',
    spec: { kind: 'hmac', secret: ['one', 'two'], header: 'x-signature', prefix: 'sha256=' },
    sign: (k, b) => signHmac(pick(k, 'one', 'two', 'three'), b, { header: 'x-signature', prefix: 'sha256=' }),
    timed: false,
  },
  {
    name: 'hmac (sha1, base64)',
    spec: { kind: 'hmac', secret: ['one', 'two'], header: 'x-body-signature', algorithm: 'sha1', encoding: 'base64' },
    sign: (k, b) =>
      signHmac(pick(k, 'one', 'two', 'three'), b, {
        header: 'x-body-signature',
        algorithm: 'sha1',
        encoding: 'base64',
      }),
    timed: false,
  },
];

const check = (spec: VerifyConfig, headers: Headers, body: string, nowMs = NOW_MS): VerifyResult =>
  createSignatureVerifier(spec)({ headers, rawBody: Buffer.from(body), nowMs });

const refused = (r: VerifyResult, why: RegExp): void => {
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.reason, why);
};

for (const kind of KINDS) {
  describe(`verify ${kind.name}`, () => {
    it('accepts a request signed with the first secret', () => {
      assert.equal(check(kind.spec, kind.sign('first', BODY, NOW_S), BODY).ok, true);
    });
    it('accepts a request signed with the second secret (rotation)', () => {
      assert.equal(check(kind.spec, kind.sign('second', BODY, NOW_S), BODY).ok, true);
    });
    it('refuses a request signed with a key it does not know', () => {
      refused(check(kind.spec, kind.sign('wrong', BODY, NOW_S), BODY), /does not match/);
    });
    it('refuses a tampered body', () => {
      refused(check(kind.spec, kind.sign('first', BODY, NOW_S), BODY.replace('4900', '1')), /does not match/);
    });
    it('refuses a request without a signature', () => {
      refused(check(kind.spec, {}, BODY), /missing/);
    });
    if (kind.timed) {
      it('refuses a replay older than the tolerance', () => {
        refused(check(kind.spec, kind.sign('first', BODY, NOW_S - 301), BODY), /older than 300 s/);
      });
      it('refuses a timestamp further in the future than the tolerance', () => {
        refused(check(kind.spec, kind.sign('first', BODY, NOW_S + 301), BODY), /future/);
      });
      it('accepts a timestamp just inside the tolerance, either way', () => {
        assert.equal(check(kind.spec, kind.sign('first', BODY, NOW_S - 299), BODY).ok, true);
        assert.equal(check(kind.spec, kind.sign('first', BODY, NOW_S + 299), BODY).ok, true);
      });
    }
  });
}

describe('verify: scheme details', () => {
  it('github carries X-Github-Delivery as the delivery id', () => {
    const r = check(
      { kind: 'github', secret: 's' },
      signGithub('s', BODY, 'f0e5c3a0-1d5b-11ef-8a39-5c1a7d8b9e10'),
      BODY,
    );
    assert.deepEqual(r, { ok: true, deliveryId: 'f0e5c3a0-1d5b-11ef-8a39-5c1a7d8b9e10' });
  });

  it('stripe carries the event id as the delivery id', () => {
    assert.deepEqual(check({ kind: 'stripe', secret: 'k' }, signStripe('k', BODY, NOW_S), BODY), {
      ok: true,
      deliveryId: 'evt_1',
    });
  });

  it('stripe accepts any of several v1 signatures and honours a configured tolerance', () => {
    const good = signStripe('k', BODY, NOW_S)['stripe-signature']!;
    const header = `t=${NOW_S},v1=${'0'.repeat(64)},${good.split(',')[1]},v0=abc`;
    assert.equal(check({ kind: 'stripe', secret: 'k' }, { 'stripe-signature': header }, BODY).ok, true);
    const old = signStripe('k', BODY, NOW_S - 100);
    refused(check({ kind: 'stripe', secret: 'k', toleranceSeconds: 60 }, old, BODY), /older than 60 s/);
  });

  it('stripe refuses a header with a timestamp but no v1', () => {
    refused(check({ kind: 'stripe', secret: 'k' }, { 'stripe-signature': `t=${NOW_S},v0=abc` }, BODY), /no v1/);
  });

  it('slack verifies a form-encoded slash command over its bytes and reports a retry', () => {
    const form = readTextFixture('slack-slash-command.txt');
    const headers = { ...signSlack('sig', form, NOW_S), 'x-slack-retry-num': '2' };
    assert.deepEqual(check({ kind: 'slack', secret: 'sig' }, headers, form), { ok: true, retryNum: 2 });
  });

  it('slack carries event_id as the delivery id', () => {
    const body = readTextFixture('slack-event-callback.json');
    assert.deepEqual(check({ kind: 'slack', secret: 'sig' }, signSlack('sig', body, NOW_S), body), {
      ok: true,
      deliveryId: 'Ev0PV52K21',
    });
  });

  it('standard-webhooks carries webhook-id and accepts one matching entry among several', () => {
    const headers = signStandardWebhooks(WHSEC_A, BODY, NOW_S, 'msg_abc');
    headers['webhook-signature'] = `v1,${Buffer.alloc(32).toString('base64')} ${headers['webhook-signature']}`;
    assert.deepEqual(check({ kind: 'standard-webhooks', secret: WHSEC_A }, headers, BODY), {
      ok: true,
      deliveryId: 'msg_abc',
    });
  });

  it('standard-webhooks reads the first MAX_ENTRIES entries of the header only', () => {
    const signed = signStandardWebhooks(WHSEC_A, BODY, NOW_S, 'msg_abc');
    const decoys = (n: number) =>
      Array.from({ length: n }, () => `v1,${Buffer.alloc(32).toString('base64')}`).join(' ');
    const at = (n: number) => ({ ...signed, 'webhook-signature': `${decoys(n)} ${signed['webhook-signature']}` });
    assert.deepEqual(check({ kind: 'standard-webhooks', secret: WHSEC_A }, at(MAX_ENTRIES - 1), BODY), {
      ok: true,
      deliveryId: 'msg_abc',
    });
    refused(check({ kind: 'standard-webhooks', secret: WHSEC_A }, at(MAX_ENTRIES), BODY), /does not match/);
    // Thousands of entries, and entries of the wrong length, are refused like any mismatch.
    refused(
      check(
        { kind: 'standard-webhooks', secret: WHSEC_A },
        { ...signed, 'webhook-signature': `${'v1,A '.repeat(3000)}` },
        BODY,
      ),
      /does not match/,
    );
  });

  it('standard-webhooks refuses a v1a signature when only an HMAC secret is configured', () => {
    refused(
      check(
        { kind: 'standard-webhooks', secret: WHSEC_A },
        signStandardWebhooksEd25519(ed.privateKey, BODY, NOW_S),
        BODY,
      ),
      /does not match/,
    );
  });

  it('standard-webhooks signs the id: a signature moved to another id is refused', () => {
    const headers = signStandardWebhooks(WHSEC_A, BODY, NOW_S, 'msg_1');
    refused(
      check({ kind: 'standard-webhooks', secret: WHSEC_A }, { ...headers, 'webhook-id': 'msg_2' }, BODY),
      /does not match/,
    );
  });

  it('refuses malformed digests and a repeated signature header', () => {
    refused(check({ kind: 'github', secret: 's' }, { 'x-hub-signature-256': 'sha256=zz' }, BODY), /does not match/);
    const twice = { 'x-hub-signature-256': [signGithub('s', BODY)['x-hub-signature-256']!, 'sha256=00'] };
    const r = createSignatureVerifier({ kind: 'github', secret: 's' })({
      headers: twice,
      rawBody: Buffer.from(BODY),
      nowMs: NOW_MS,
    });
    refused(r, /missing/);
  });

  it('refuses to build a standard-webhooks verifier whose key is not base64', () => {
    assert.throws(
      () => createSignatureVerifier({ kind: 'standard-webhooks', secret: 'whsec_not base64!' }),
      /whsec_<base64>/,
    );
    assert.throws(() => createSignatureVerifier({ kind: 'standard-webhooks', publicKey: 'whpk_AAAA' }), /32-byte/);
  });
});
