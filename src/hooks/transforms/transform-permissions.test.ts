import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretScrubber } from '../../common/scrub-secrets.js';
import { createTransformRunner, type TransformSpec, type WorkerTransformRunner } from './create-transform-runner.js';
import { permissionFlag, transformPermissionFlags, transformReadPaths } from './transform-permissions.js';
import { TRANSFORM_WORKER_URL } from './start-transform-worker.js';

const INPUT = { payload: { n: 1 }, headers: {}, url: '/hooks/x', path: 'x' };
/** A secret in the gateway's own environment, as every model key and bot token is. */
const GATEWAY_SECRET = 'sk-gateway-own-key-2f9e1c7b44d0';
const GIVEN_TOKEN = 'ghp_GivenToTheTransform0123456789abcd';

describe('permissionFlag', () => {
  const flags = (...names: string[]): ReadonlySet<string> => new Set(names);

  it('takes --permission where Node has it, --experimental-permission from 20.8, and nothing before', () => {
    assert.equal(
      permissionFlag({ flags: flags('--permission', '--experimental-permission'), version: '22.13.0' }),
      '--permission',
    );
    assert.equal(
      permissionFlag({ flags: flags('--experimental-permission'), version: '20.8.0' }),
      '--experimental-permission',
    );
    assert.equal(
      permissionFlag({ flags: flags('--experimental-permission'), version: '21.1.0' }),
      '--experimental-permission',
    );
    assert.equal(permissionFlag({ flags: flags('--experimental-permission'), version: '20.7.0' }), null);
    assert.equal(permissionFlag({ flags: flags(), version: '20.20.0' }), null);
  });

  it('gives each readable path a flag of its own and silences the experimental warning where it can', () => {
    const node = { flags: flags('--experimental-permission', '--disable-warning'), version: '20.20.0' };
    assert.deepEqual(transformPermissionFlags(['/a', '/b,c'], node), [
      '--experimental-permission',
      '--allow-fs-read=/a',
      '--allow-fs-read=/b,c',
      '--disable-warning=ExperimentalWarning',
    ]);
    assert.deepEqual(transformPermissionFlags(['/a'], { flags: flags(), version: '20.0.0' }), []);
  });

  it('lists each readable directory once, without a trailing separator (which aborts Node 20)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-perm-paths-'));
    try {
      const paths = transformReadPaths(`${dir}/`, TRANSFORM_WORKER_URL);
      assert.ok(paths.includes(dir), paths.join(' '));
      for (const p of paths) assert.ok(!p.endsWith('/'), p);
      assert.equal(new Set(paths).size, paths.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a transform process under the permission model', { skip: permissionFlag() === null }, () => {
  let base: string;
  let root: string;
  let configFile: string;
  let run: WorkerTransformRunner;

  const spec = (rel: string, env: Record<string, string> = {}): TransformSpec => ({
    key: rel,
    file: join(root, rel),
    exportName: 'default',
    timeoutMs: 20_000,
    maxMemoryMb: 128,
    maxResultBytes: 256 * 1024,
    env,
  });
  const write = (rel: string, source: string): void => writeFileSync(join(root, rel), source);
  const probe = async (rel: string, body: string, env: Record<string, string> = {}): Promise<unknown> => {
    write(rel, `export default async () => { ${body} };`);
    return run(spec(rel, env), INPUT);
  };
  before(() => {
    base = mkdtempSync(join(tmpdir(), 'hookgate-perm-'));
    root = join(base, 'hooks', 'transforms');
    mkdirSync(join(root, 'node_modules', 'shaper'), { recursive: true });
    configFile = join(base, 'hookgate.json');
    writeFileSync(configFile, JSON.stringify({ hooks: { token: 'hook-token-in-the-config-file' } }));
    writeFileSync(
      join(root, 'node_modules', 'shaper', 'package.json'),
      JSON.stringify({ name: 'shaper', type: 'module', main: 'index.js' }),
    );
    writeFileSync(join(root, 'node_modules', 'shaper', 'index.js'), 'export const shape = (n) => `shaped ${n}`;\n');
    process.env['HOOKGATE_TEST_GATEWAY_SECRET'] = GATEWAY_SECRET;
    run = createTransformRunner(root, { scrub: createSecretScrubber([GIVEN_TOKEN]) });
  });
  after(async () => {
    delete process.env['HOOKGATE_TEST_GATEWAY_SECRET'];
    await run.close();
    rmSync(base, { recursive: true, force: true });
  });

  it("cannot read the gateway's environment: it has only what its mapping lists", async () => {
    const seen = (await probe(
      'env.mjs',
      'return { names: Object.keys(process.env), secret: process.env.HOOKGATE_TEST_GATEWAY_SECRET ?? null, region: process.env.REGION };',
      { REGION: 'eu-west-1' },
    )) as { names: string[]; secret: string | null; region: string };
    assert.deepEqual(seen, { names: ['REGION'], secret: null, region: 'eu-west-1' });
  });

  it('cannot read the config file, nor any file outside the transforms directory', async () => {
    write(
      'read.mjs',
      `import { readFileSync } from 'node:fs';
      export default () => {
        const read = (p) => { try { readFileSync(p, 'utf8'); return 'read'; } catch (e) { return e.code; } };
        return { config: read(${JSON.stringify(configFile)}), passwd: read('/etc/passwd'), own: read(${JSON.stringify(join(root, 'read.mjs'))}) };
      };`,
    );
    assert.deepEqual(await run(spec('read.mjs'), INPUT), {
      config: 'ERR_ACCESS_DENIED',
      passwd: 'ERR_ACCESS_DENIED',
      own: 'read',
    });
  });

  it('cannot start a child process, a worker, or write a file, by the process-wide permissions too', async () => {
    write(
      'spawn.mjs',
      `import { spawnSync } from 'node:child_process';
      export default () => {
        let spawned;
        try { spawned = spawnSync('id').status; } catch (e) { spawned = 'refused'; }
        const p = process.permission;
        return {
          spawned,
          child: p.has('child'),
          worker: p.has('worker'),
          write: p.has('fs.write'),
          config: p.has('fs.read', ${JSON.stringify(configFile)}),
          transforms: p.has('fs.read', ${JSON.stringify(root)}),
        };
      };`,
    );
    assert.deepEqual(await run(spec('spawn.mjs'), INPUT), {
      spawned: 'refused',
      child: false,
      worker: false,
      write: false,
      config: false,
      transforms: true,
    });
  });

  it('loads the packages installed in the transforms directory', async () => {
    write('uses-package.mjs', "import { shape } from 'shaper'; export default () => ({ text: shape(7) });");
    assert.deepEqual(await run(spec('uses-package.mjs'), INPUT), { text: 'shaped 7' });
  });

  it('has the secret its mapping gave it scrubbed out of everything it returns', async () => {
    write(
      'echo.mjs',
      'export default () => ({ text: `token ${process.env.GITHUB_TOKEN}`, nested: { list: [process.env.GITHUB_TOKEN, 3] } });',
    );
    assert.deepEqual(await run(spec('echo.mjs', { GITHUB_TOKEN: GIVEN_TOKEN }), INPUT), {
      text: 'token [redacted]',
      nested: { list: ['[redacted]', 3] },
    });
  });
});
