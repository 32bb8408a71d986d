import { describe, it, beforeEach, afterEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreOpenError } from '../store-open-error.js';
import type { Store } from '../store.js';
import { createSqliteStore } from './create-sqlite-store.js';
import { StoreLockedError } from './lock-database.js';

/** Asserts a one-sentence refusal: a StoreOpenError naming the file and the cause, one line, no stack. */
function assertOpenRefused(open: () => unknown, file: string, cause: RegExp): void {
  assert.throws(open, (error: unknown) => {
    assert.ok(error instanceof StoreOpenError, `a StoreOpenError, got ${String(error)}`);
    assert.ok(error.message.includes(file), error.message);
    assert.match(error.message, cause);
    assert.ok(!error.message.includes('\n'), 'one line');
    return true;
  });
}

describe('SQLite stores by the file, not the name', () => {
  let dir: string;
  const stores: Store[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-names-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a database through a symlink, its WAL and lock beside the real file, and refuses a second gateway by either name', async () => {
    mkdirSync(join(dir, 'real'));
    const real = join(dir, 'real', 'h.db');
    const link = join(dir, 'link.db');
    symlinkSync(real, link);
    const store = createSqliteStore({ path: link });
    stores.push(store);
    await store.addSystemEvent({
      id: 'e1',
      agentId: 'main',
      sessionKey: 'agent:main:main',
      text: 'through a link',
      mode: 'now',
      source: { hook: 'wake', external: true, allowUnsafeExternalContent: false },
      createdAt: 1,
    });
    assert.ok(existsSync(`${real}-wal`) && existsSync(`${real}.lock`));
    assert.ok(!existsSync(`${link}-wal`) && !existsSync(`${link}.lock`));
    for (const other of [real, link]) assert.throws(() => createSqliteStore({ path: other }), StoreLockedError);
  });

  it('creates the database, its WAL, index and lock readable by their owner alone', async () => {
    const path = join(dir, 'state', 'h.db');
    const store = createSqliteStore({ path });
    stores.push(store);
    await store.addSystemEvent({
      id: 'e2',
      agentId: 'main',
      sessionKey: 'agent:main:main',
      text: 'private',
      mode: 'now',
      source: { hook: 'wake', external: true, allowUnsafeExternalContent: false },
      createdAt: 1,
    });
    for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}.lock`])
      assert.equal((statSync(file).mode & 0o777).toString(8), '600', file);
    assert.equal((statSync(join(dir, 'state')).mode & 0o777).toString(8), '700');
  });

  it('refuses a database with two names (a hard link), naming the file', async () => {
    const first = join(dir, 'a.db');
    createSqliteStore({ path: first })
      .close()
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = join(dir, 'b.db');
    linkSync(first, second);
    for (const name of [first, second])
      assertOpenRefused(() => createSqliteStore({ path: name }), name, /2 names \(hard links\)/);
  });

  it('refuses a corrupt file in one sentence naming it and the cause', () => {
    const path = join(dir, 'corrupt.db');
    writeFileSync(path, Buffer.alloc(8192, 'not a database '));
    assertOpenRefused(() => createSqliteStore({ path }), path, /not a SQLite database, or is corrupt/);
  });

  it('refuses a path through a file in one sentence', () => {
    writeFileSync(join(dir, 'plain'), 'x');
    const path = join(dir, 'plain', 'h.db');
    assertOpenRefused(() => createSqliteStore({ path }), path, /not a directory|cannot be opened/);
  });
});

/** A small file system of its own to fill up: a tmpfs, where this test may mount one (root on Linux). */
function mountTmpfs(dir: string, sizeKb: number): string | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux to mount a tmpfs';
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { stdio: 'ignore' });
    return null;
  } catch (error) {
    return `cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`;
  }
}

/** Opens the store in a process of its own, writes once, and is killed: its WAL and lock file stay. */
function openAndKill(path: string): void {
  const store = new URL('./create-sqlite-store.js', import.meta.url).href;
  const script = `import { createSqliteStore } from ${JSON.stringify(store)};
    const s = createSqliteStore({ path: ${JSON.stringify(path)} });
    await s.addSystemEvent({ id: 'e1', agentId: 'main', sessionKey: 'agent:main:main', text: 'x', mode: 'now',
      source: { hook: 'wake', external: true, allowUnsafeExternalContent: false }, createdAt: 1 });
    process.kill(process.pid, 'SIGKILL');`;
  try {
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
  } catch {
    // Killed, as meant.
  }
}

describe('SQLite stores on a full or read-only disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-full-'));
  const skip = mountTmpfs(dir, 2048);
  if (skip !== null) process.stderr.write(`SKIPPED: SQLite stores on a full or read-only disk: ${skip}\n`);
  const path = join(dir, 'state', 'h.db');
  const filler = join(dir, 'fill');
  // Lazily: a store a full disk kept from closing cleanly may still hold a file there.
  after(() => {
    if (skip === null) execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const fill = (): void => {
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1k'], { stdio: 'ignore' });
    } catch {
      // dd ends with an error once the disk is full: that is the point.
    }
  };

  it('starts on a full disk a killed gateway left its files on, and takes its lock', {
    skip: skip ?? false,
  }, async () => {
    openAndKill(path);
    assert.ok(existsSync(`${path}-wal`), 'the WAL is left');
    fill();
    try {
      const store = createSqliteStore({ path });
      try {
        assert.throws(() => createSqliteStore({ path }), StoreLockedError);
      } finally {
        await store.close().catch(() => undefined);
      }
    } finally {
      rmSync(filler, { force: true });
    }
  });

  it('refuses in one sentence when the disk is full and SQLite has no room to open the file', {
    skip: skip ?? false,
  }, async () => {
    await createSqliteStore({ path }).close();
    assert.ok(!existsSync(`${path}-shm`), 'closed cleanly: no index left');
    fill();
    try {
      assertOpenRefused(() => createSqliteStore({ path }), path, /: the disk is full$/);
    } finally {
      rmSync(filler, { force: true });
    }
  });

  it('refuses a read-only mount in one sentence', { skip: skip ?? false }, async () => {
    const ro = mkdtempSync(join(tmpdir(), 'hookgate-ro-'));
    mountTmpfs(ro, 1024);
    const roPath = join(ro, 'state', 'h.db');
    try {
      await createSqliteStore({ path: roPath }).close();
      execFileSync('mount', ['-o', 'remount,ro', ro]);
      assertOpenRefused(() => createSqliteStore({ path: roPath }), roPath, /read-only/);
    } finally {
      execFileSync('umount', ['-l', ro]);
      rmSync(ro, { recursive: true, force: true });
    }
  });
});
