/**
 * The README's GitHub recipe, read from the README itself: GitHub's `ping` is answered 200 and
 * starts no run; a signed `pull_request` event starts one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import JSON5 from 'json5';
import { send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { signGithub } from '../helpers/sign-webhooks.js';
import { baseConfig } from '../helpers/temp-config.js';

const SECRET = 'github-recipe-secret-5c1e9a77d2';

/** The `hooks` block of the README's "signed GitHub webhooks" recipe, as written there. */
function recipeHooks(): { mappings: unknown[] } {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Recipe: signed GitHub webhooks'));
  const block = /```json5\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block !== undefined, 'the recipe has a json5 block');
  return (JSON5.parse(`{${block}}`) as { hooks: { mappings: unknown[] } }).hooks;
}

describe('the GitHub recipe', () => {
  let gw: TestGateway;
  before(async () => {
    const doc = baseConfig({ hooks: { enabled: true, token: 'test-hook-token-6f1c2a9e', ...recipeHooks() } });
    gw = await startTestGateway(doc, { env: { GITHUB_WEBHOOK_SECRET: SECRET } });
  });
  after(() => gw.stop());

  const deliver = (event: string, payload: unknown, id: string) => {
    const body = JSON.stringify(payload);
    const headers = { ...signGithub(SECRET, body, id), 'x-github-event': event, 'content-type': 'application/json' };
    return send(gw.port, '/hooks/github', { auth: false, body, headers });
  };

  it('answers ping 200 without a run, and runs a pull request', async () => {
    const ping = await deliver('ping', { zen: 'Keep it logically awesome.', hook_id: 1 }, 'd-ping-1');
    assert.equal(ping.status, 200, ping.text);
    assert.deepEqual(await gw.gateway.store.listRuns(), []);
    const pr = await deliver(
      'pull_request',
      { action: 'opened', repository: { full_name: 'octo/hello' }, sender: { login: 'octocat' } },
      'd-pr-1',
    );
    assert.equal(pr.status, 202, pr.text);
    const runs = await gw.gateway.store.listRuns();
    assert.equal(runs.length, 1);
    assert.match(runs[0]!.message, /GitHub pull_request opened in octo\/hello by octocat/);
  });

  it('refuses a ping signed with another secret', async () => {
    const body = JSON.stringify({ zen: 'x' });
    const headers = { ...signGithub('another-secret-0000000000', body, 'd-ping-2'), 'x-github-event': 'ping' };
    const res = await send(gw.port, '/hooks/github', { auth: false, body, headers });
    assert.equal(res.status, 401, res.text);
  });
});
