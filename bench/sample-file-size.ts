/** Polls a file's size (the SQLite WAL) while a run lasts; a missing file counts as 0 bytes. */
import { statSync } from 'node:fs';

export interface FileSizeSample {
  maxBytes: number;
  lastBytes: number;
}

export function sampleFileSize(path: string, intervalMs = 50): { stop(): FileSizeSample } {
  const read = (): number => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  let maxBytes = read();
  const timer = setInterval(() => {
    maxBytes = Math.max(maxBytes, read());
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const lastBytes = read();
      return { maxBytes: Math.max(maxBytes, lastBytes), lastBytes };
    },
  };
}
