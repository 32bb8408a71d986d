/**
 * Commands that only read the store work without the `${ENV}` secrets the config names: an unset
 * variable in a credential outside `store` is only an error where the credential is used (`serve`,
 * `check`); one in `store` still is.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/main.js';
import { post } from '../helpers/http-client.js';
import { runCliInProcess } from '../helpers/run-cli-in-process.js';
import { baseConfig, createTempConfig, GATEWAY_TOKEN, HOOK_TOKEN, type TempConfig } from '../helpers/temp-config.js';

const SECRETS = {
  HG_HOOK_TOKEN: HOOK_TOKEN,
  HG_GATEWAY_TOKEN: GATEWAY_TOKEN,
  HG_TELEGRAM: '123456:telegram-bot-token',
};

describe('read-only commands without the config secrets', () => {
  let temp: TempConfig;
  const doc = (store: Record<string, unknown> = { driver: 'sqlite', path: 'state/hookgate.db' }) =>
    baseConfig({
      gateway: { bind: '127.0.0.1', port: 0, auth: { token: '${HG_GATEWAY_TOKEN}' }, logLevel: 'warn' },
      hooks: { enabled: true, token: '${HG_HOOK_TOKEN}' },
      channels: { telegram: { botToken: '${HG_TELEGRAM}' } },
      store,
    });
  const cli = (...argv: string[]) => runCliInProcess(temp.path, argv);

  before(async () => {
    temp = createTempConfig(doc());
    const gateway = await startGateway(readConfig(temp.path, SECRETS), {
      port: 0,
      log: createLog({ level: 'silent' }),
    });
    try {
      const res = await post(gateway.port, '/hooks/wake', { text: 'stored before', mode: 'next-heartbeat' });
      assert.equal(res.status, 200, res.text);
    } finally {
      await gateway.close();
    }
  });
  after(() => temp.cleanup());

  it('answers status, runs, events, sessions, deliveries and prune --dry-run', async () => {
    const status = await cli('status', '--json');
    assert.equal(status.code, 0, status.stderr);
    assert.equal(typeof JSON.parse(status.stdout), 'object');
    const events = await cli('events', '--json');
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout, /stored before/);
    for (const argv of [['runs'], ['sessions'], ['deliveries'], ['prune', '--dry-run']]) {
      const r = await cli(...argv);
      assert.equal(r.code, 0, `${argv.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /HG_/);
    }
  });

  it('still refuses them where they are used: check, and a real prune', async () => {
    const check = await cli('check');
    assert.notEqual(check.code, 0);
    assert.match(check.stderr, /hooks\.token: environment variable HG_HOOK_TOKEN is not set/);
    assert.match(check.stderr, /channels\.telegram\.botToken: environment variable HG_TELEGRAM is not set/);
    const prune = await cli('prune');
    assert.notEqual(prune.code, 0);
    assert.match(prune.stderr, /HG_HOOK_TOKEN/);
  });

  it('still refuses an unset variable in the store settings', async () => {
    writeFileSync(temp.path, JSON.stringify(doc({ driver: 'postgres', url: '${HG_DATABASE_URL}' })));
    const status = await cli('status');
    assert.notEqual(status.code, 0);
    assert.match(status.stderr, /store\.url: environment variable HG_DATABASE_URL is not set/);
    writeFileSync(temp.path, JSON.stringify(doc()));
  });
});
