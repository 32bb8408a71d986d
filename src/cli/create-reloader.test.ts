import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLog } from '../common/log.js';
import type { LoadedConfig } from '../config/index.js';
import { createReloader } from './create-reloader.js';

const dir = mkdtempSync(join(tmpdir(), 'hookgate-reloader-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'hookgate.json');
const write = (hooks: Record<string, unknown>): void =>
  writeFileSync(path, JSON.stringify({ hooks: { enabled: true, ...hooks } }));

function setup(preflightIssues: { path: string; message: string }[] = []) {
  const applied: LoadedConfig[] = [];
  const lines: Record<string, unknown>[] = [];
  const reload = createReloader({
    path,
    env: {},
    log: createLog({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), repeatIntervalMs: 0 }),
    gateway: {
      reload: (next) => {
        applied.push(next);
        return next.config.hooks.authRateLimit.maxFailures === 20 ? [] : ['hooks.authRateLimit'];
      },
    },
    preflight: async () => preflightIssues,
    override: (l) => {
      l.config.gateway.port = 4321;
      return l;
    },
  });
  return { reload, applied, lines };
}

describe('createReloader', () => {
  it('applies a valid config, with the command-line overrides', async () => {
    write({ token: 'tok-a-0123456789abcd' });
    const s = setup();
    assert.equal(await s.reload('SIGHUP'), true);
    assert.equal(s.applied.length, 1);
    assert.equal(s.applied[0]!.config.hooks.token, 'tok-a-0123456789abcd');
    assert.equal(s.applied[0]!.config.gateway.port, 4321);
    assert.ok(s.lines.some((l) => l['msg'] === 'config reloaded' && l['reason'] === 'SIGHUP'));
  });

  it('refuses an invalid config without touching the gateway, and logs the issues', async () => {
    write({ tokn: 'typo' });
    const s = setup();
    assert.equal(await s.reload('file changed'), false);
    assert.equal(s.applied.length, 0);
    const refused = s.lines.find((l) => l['msg'] === 'config reload refused; the running config stays');
    assert.ok(refused !== undefined);
    assert.equal(refused['level'], 50);
    assert.match(JSON.stringify(refused['issues']), /hooks\.tokn/);
  });

  it('refuses a config the preflight rejects', async () => {
    write({ token: 'tok-b-0123456789abcd' });
    const s = setup([{ path: 'gateway.bind', message: 'not an address' }]);
    assert.equal(await s.reload('SIGHUP'), false);
    assert.equal(s.applied.length, 0);
  });

  it('warns about changes that need a restart', async () => {
    write({ token: 'tok-c-0123456789abcd', authRateLimit: { maxFailures: 3 } });
    const s = setup();
    assert.equal(await s.reload('SIGHUP'), true);
    const notice = s.lines.find((l) => l['msg'] === 'config changes that take effect only after a restart');
    assert.deepEqual(notice?.['keys'], ['hooks.authRateLimit']);
  });

  it('runs reloads one after another, never two at once', async () => {
    write({ token: 'tok-d-0123456789abcd' });
    let running = 0;
    let overlapped = false;
    const reload = createReloader({
      path,
      env: {},
      log: createLog({ level: 'silent' }),
      gateway: { reload: () => [] },
      preflight: async () => {
        running += 1;
        if (running > 1) overlapped = true;
        await new Promise((r) => setImmediate(r));
        running -= 1;
        return [];
      },
      override: (l) => l,
    });
    assert.deepEqual(await Promise.all([reload('a'), reload('b'), reload('c')]), [true, true, true]);
    assert.equal(overlapped, false);
  });
});
