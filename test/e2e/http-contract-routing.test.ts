/**
 * The HTTP contract of DESIGN §3, routing: health, the method check (step 1) and paths inside and
 * outside the hooks base (step 9), against the real server started in this process on port 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-response.js';
import { post, send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { HOOK_TOKEN } from '../helpers/temp-config.js';
import { MAIN_CONFIG } from './http-contract-setup.js';

describe('HTTP contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(MAIN_CONFIG);
  });
  after(async () => {
    await gw?.stop();
  });

  describe('health', () => {
    it('answers GET /healthz with 200 without a token', async () => {
      const res = await send(gw.port, '/healthz', { method: 'GET', auth: false });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { ok: true });
    });

    it('answers HEAD /healthz with 200 and no body', async () => {
      const res = await send(gw.port, '/healthz', { method: 'HEAD', auth: false });
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
    });

    for (const path of ['/healthz', '/readyz']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        it(`answers ${method} ${path} with 405, Allow: GET, HEAD`, async () => {
          const res = await send(gw.port, path, { method, auth: false, body: { text: 'x' } });
          assertError(res, 405, 'method_not_allowed');
          assert.equal(res.headers['allow'], 'GET, HEAD');
        });
      }
    }
  });

  describe('Expect', () => {
    it('answers an expectation other than 100-continue with 417 and a JSON body', async () => {
      const res = await send(gw.port, '/hooks/wake', { body: { text: 'x' }, headers: { expect: 'something-else' } });
      assertError(res, 417, 'expectation_failed');
    });
  });

  describe('method (step 1)', () => {
    for (const path of ['/hooks/wake', '/hooks/agent']) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        it(`returns 405 with Allow: POST for ${method} ${path}`, async () => {
          const res = await send(gw.port, path, { method, ...(method === 'PUT' ? { body: { text: 'x' } } : {}) });
          assertError(res, 405, 'method_not_allowed');
          assert.equal(res.headers['allow'], 'POST');
        });
      }
    }

    it('returns 405 before looking at a token in the query string', async () => {
      const res = await send(gw.port, `/hooks/wake?token=${HOOK_TOKEN}`, { method: 'GET' });
      assertError(res, 405, 'method_not_allowed');
    });

    it('returns 405 before looking at the token', async () => {
      const res = await send(gw.port, '/hooks/wake', { method: 'GET', auth: false });
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers['allow'], 'POST');
    });
  });

  describe('routing (step 9)', () => {
    it('returns 404 hook_not_found for an unknown hook name (authenticated, valid JSON)', async () => {
      assertError(await post(gw.port, '/hooks/unknown', { text: 'x' }), 404, 'hook_not_found');
    });

    it('does not echo the hook name in the 404', async () => {
      const res = await post(gw.port, '/hooks/%3Cscript%3Ealert(1)%3C%2Fscript%3E', { text: 'x' });
      assertError(res, 404, 'hook_not_found');
      assert.ok(!res.text.includes('script'), res.text);
    });

    it('treats hook names as case-sensitive', async () => {
      assertError(await post(gw.port, '/hooks/WAKE', { text: 'x' }), 404, 'hook_not_found');
    });

    it('tolerates one trailing slash', async () => {
      const wake = await post(gw.port, '/hooks/wake/', { text: 'trailing slash' });
      assert.equal(wake.status, 200, wake.text);
      const agent = await post(gw.port, '/hooks/agent/', { message: 'trailing slash' });
      assert.equal(agent.status, 202, agent.text);
    });

    it('does not tolerate two trailing slashes', async () => {
      const res = await post(gw.port, '/hooks/wake//', { text: 'x' });
      assert.equal(res.status, 404, res.text);
    });

    for (const path of ['/', '/wake', '/hook/wake', '/hookswake', '/HOOKS/wake', '/api/hooks/wake', '/hooks']) {
      it(`returns 404 for ${path}, outside the hooks prefix`, async () => {
        assertError(await post(gw.port, path, { text: 'x' }), 404, 'not_found');
      });
    }
  });
});
