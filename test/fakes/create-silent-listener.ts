import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

/** A loopback port where a connect is never answered: see `createSilentListener`. */
export interface SilentListener {
  host: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The listener runs on a thread that blocks right after `listen` (backlog 1), so nothing accepts:
 * once its accept queue is full, Linux drops each new SYN and the client's connect hangs, as it
 * does towards a host behind a firewall that drops packets. A connect refused instead (a closed
 * port) answers at once, so it cannot stand in for this.
 */
const LISTENER_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const server = require('node:net').createServer();
server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
  parentPort.postMessage(server.address().port);
  Atomics.wait(new Int32Array(workerData), 0, 0);
  server.close();
});
`;

/** Connections made to fill the accept queue before one hangs; the kernel fits backlog + 1. */
const MAX_FILLERS = 16;
/** A loopback connect that takes longer than this is taken as hanging. */
const HANG_MS = 300;

/** Resolves with the connected socket, or `null` when the connect has not completed within `HANG_MS`. */
function tryConnect(port: number): Promise<Socket | null> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, HANG_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Starts a listener whose connects hang; `close()` lets it go. */
export async function createSilentListener(): Promise<SilentListener> {
  const release = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(LISTENER_THREAD, { eval: true, workerData: release.buffer });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const fillers: Socket[] = [];
  const close = async (): Promise<void> => {
    for (const s of fillers) s.destroy();
    Atomics.store(release, 0, 1);
    Atomics.notify(release, 0);
    await worker.terminate();
  };
  for (;;) {
    const socket = await tryConnect(port);
    if (socket === null) return { host: '127.0.0.1', port, close };
    socket.on('error', () => undefined);
    fillers.push(socket);
    if (fillers.length >= MAX_FILLERS) {
      await close();
      throw new Error(
        `createSilentListener: ${MAX_FILLERS} connects to a listener that accepts nothing all completed; this system does not drop SYNs past a full accept queue`,
      );
    }
  }
}
