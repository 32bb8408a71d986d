/** Helpers every channel adapter test uses. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryError } from '../../src/delivery/channel-adapter.js';

/** Awaits `p` and returns the `DeliveryError` it must reject with. */
export async function rejects(p: Promise<unknown>): Promise<DeliveryError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof DeliveryError, String(error));
    return error;
  }
  assert.fail('expected a DeliveryError');
}

/** A loopback URL nothing listens on (bound, read, closed). */
export async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A generous per-call timeout for tests that expect an answer. */
export const signal = (): AbortSignal => AbortSignal.timeout(5000);

/** `chars` characters of words, for length-limit tests. */
export const words = (chars: number): string =>
  'lorem ipsum dolor sit amet '.repeat(Math.ceil(chars / 27)).slice(0, chars);
