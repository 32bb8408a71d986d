import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** Symlinks followed at most, as the kernel does (ELOOP past it). */
const MAX_LINKS = 40;

/**
 * Where a database really is: `store.path` with every symlink resolved, also a dangling one and
 * the directories of a file not created yet. SQLite names the WAL after the file it really opens,
 * so a gateway that kept a symlink's name looked for `<link>-wal` and crashed at start; and a lock
 * taken on a name is another lock for each name of the file.
 */
export function resolveDatabasePath(path: string): string {
  let current = resolve(path);
  for (let hops = 0; ; hops++) {
    let isLink = false;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (!isLink) break;
    if (hops >= MAX_LINKS) throw Object.assign(new Error(`too many symbolic links: ${path}`), { code: 'ELOOP' });
    current = resolve(dirname(current), readlinkSync(current));
  }
  // The file itself may not exist yet: its nearest existing directory is resolved, the rest kept.
  const rest: string[] = [];
  for (let dir = current; ; ) {
    try {
      return join(realpathSync(dir), ...rest.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const parent = dirname(dir);
      if (parent === dir) return current;
      rest.push(basename(dir));
      dir = parent;
    }
  }
}
