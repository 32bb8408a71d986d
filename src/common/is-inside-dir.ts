import { isAbsolute, relative, sep } from 'node:path';

/**
 * Whether `target` is `root` or lies below it. Compares path segments, so a file named
 * `..notes.js` inside the root is inside, while `../x` is not.
 */
export function isInsideDir(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
