import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkBind } from './check-bind.js';

const LOCAL = ['127.0.0.1', '::1', '192.168.1.20'];
const names: Record<string, string[]> = { localhost: ['127.0.0.1', '::1'], 'gw.example': ['203.0.113.9'] };
const deps = {
  localAddresses: () => LOCAL,
  resolve: async (host: string): Promise<string[]> => {
    const found = names[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  },
};

describe('checkBind', () => {
  for (const bind of ['127.0.0.1', '::1', '0.0.0.0', '::', '192.168.1.20', 'localhost']) {
    it(`accepts ${bind}`, async () => assert.deepEqual(await checkBind(bind, deps), []));
  }

  it('refuses "loopback", a name that resolves nowhere', async () => {
    const issues = await checkBind('loopback', deps);
    assert.deepEqual(
      issues.map((i) => i.path),
      ['gateway.bind'],
    );
    assert.match(issues[0]!.message, /"loopback" is not an IP address and does not resolve/);
  });

  it('refuses an address that is not on this machine', async () => {
    assert.match((await checkBind('10.9.8.7', deps))[0]!.message, /not an address of this machine/);
  });

  it('refuses a name that resolves only to other machines', async () => {
    assert.match((await checkBind('gw.example', deps))[0]!.message, /203\.0\.113\.9, none of them/);
  });

  it('resolves "loopback" for real as a refusal too (no injected resolver)', async () => {
    assert.equal((await checkBind('loopback.invalid')).length, 1);
  });
});
