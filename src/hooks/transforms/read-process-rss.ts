import { readFileSync } from 'node:fs';

/**
 * The resident memory of process `pid` in bytes, from `/proc/<pid>/status` (Linux), or `undefined`
 * where that cannot be read (another system, or the process is gone).
 */
export function readProcessRss(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return undefined;
  }
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return kb === null ? undefined : Number(kb[1]) * 1024;
}
