import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each newline-ended line `stream` delivers (UTF-8, without the newline). A
 * line still unfinished past `maxBytes()` calls `onTooLong` once and reading stops: what is held of
 * a line is bounded, whatever the other end writes.
 */
export function readLines(
  stream: Readable,
  maxBytes: () => number,
  onLine: (line: string) => void,
  onTooLong: (bytes: number) => void,
): void {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let stopped = false;
  const onData = (chunk: Buffer): void => {
    if (stopped) return;
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      const part = chunk.subarray(from, nl);
      const line = heldBytes === 0 ? part.toString('utf8') : Buffer.concat([...held, part]).toString('utf8');
      held = [];
      heldBytes = 0;
      from = nl + 1;
      onLine(line);
      if (stopped) return;
    }
    if (from < chunk.length) {
      held.push(chunk.subarray(from));
      heldBytes += chunk.length - from;
      if (heldBytes > maxBytes()) {
        stopped = true;
        held = [];
        stream.off('data', onData);
        stream.pause();
        onTooLong(heldBytes);
      }
    }
  };
  stream.on('data', onData);
}
