/**
 * Connections that ask nothing cannot lock legitimate clients out: 2,000 slowloris connections
 * (loopback, each sending its headers a byte a second, reopened when closed) hold a gateway child
 * process with `maxConnections: 1000` full, while a client sends 100 wakes, each on a connection of
 * its own. At capacity a newcomer takes the place of the oldest connection that has not sent a
 * complete request, so the wakes are answered; before, every one was 503 `over_capacity` until the
 * slow connections' headers timed out, 20 s later, and they came straight back.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { readOpenFileLimit } from '../../src/http/resolve-max-connections.js';
import { freePort, spawnGateway } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, createTempConfig } from '../helpers/temp-config.js';

const SLOW = 2_000;
const MAX_CONNECTIONS = 1_000;
const WAKES = 100;
/** Slow connections opened in all, at most, renewals included: the attack is bounded. */
const MAX_OPENED = 20_000;
/** A closed slow connection is opened again after this long. */
const REOPEN_MS = 1_000;
/** Both sides' sockets, the gateway's descriptors and some room. */
const FILES_NEEDED = SLOW + MAX_CONNECTIONS + 1_000;

describe('slowloris against the connection cap', () => {
  const fileLimit = readOpenFileLimit();
  const skip =
    fileLimit !== undefined && fileLimit < FILES_NEEDED
      ? `the open-file limit (${fileLimit}) is below the ${FILES_NEEDED} descriptors this test needs (ulimit -n)`
      : false;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it(`answers at least ${WAKES - 1} of ${WAKES} wakes 2xx while ${SLOW} slow connections hold it full`, {
    skip,
    timeout: 180_000,
  }, async (t) => {
    const port = await freePort();
    const config = createTempConfig(
      baseConfig({
        gateway: { bind: '127.0.0.1', port, logLevel: 'error', maxConnections: MAX_CONNECTIONS },
      }),
    );
    cleanups.push(() => config.cleanup());
    const gw = await spawnGateway(['--config', config.path], port);
    cleanups.push(() => gw.kill());

    const slow = new Set<Socket>();
    let opened = 0;
    let attacking = true;
    const openSlow = (): Promise<void> =>
      new Promise((resolve) => {
        if (!attacking || opened >= MAX_OPENED) return resolve();
        opened++;
        const s = connect({ host: '127.0.0.1', port });
        slow.add(s);
        s.on('error', () => undefined);
        s.once('connect', () => {
          s.write('POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\n');
          resolve();
        });
        s.once('close', () => {
          slow.delete(s);
          resolve();
          if (attacking) setTimeout(() => void openSlow(), REOPEN_MS).unref();
        });
      });
    const drip = setInterval(() => {
      for (const s of slow) if (s.writable) s.write('x');
    }, 1_000);
    cleanups.push(() => {
      attacking = false;
      clearInterval(drip);
      for (const s of slow) s.destroy();
    });
    // Opened a few hundred at a time: the accept queue holds what the gateway has not taken yet.
    for (let i = 0; i < SLOW; i += 200) await Promise.all(Array.from({ length: 200 }, () => openSlow()));

    const statuses = new Map<number, number>();
    for (let i = 0; i < WAKES; i++) {
      let status = 0;
      try {
        status = (await post(port, '/hooks/wake', { text: `wake ${i}`, mode: 'next-heartbeat' }, { timeoutMs: 10_000 }))
          .status;
      } catch {
        // Reset or timed out: counted as 0.
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 10));
    }
    const slowOpenAtEnd = slow.size;
    attacking = false;
    clearInterval(drip);
    for (const s of slow) s.destroy();
    t.diagnostic(
      `wake answers ${JSON.stringify([...statuses])}; ${opened} slow connections opened, ${slowOpenAtEnd} open at the end`,
    );
    assert.ok(opened >= SLOW, 'the attack opened all its connections');
    // Those closed for the wakes' sake wait a second to come back: nearly all are open at any time.
    assert.ok(slowOpenAtEnd >= MAX_CONNECTIONS * 0.9, 'the slow connections still filled the gateway at the end');
    const ok = [...statuses].filter(([s]) => s >= 200 && s < 300).reduce((n, [, c]) => n + c, 0);
    assert.ok(ok >= WAKES - 1, `${ok} of ${WAKES} wakes answered 2xx: ${JSON.stringify([...statuses])}`);
    assert.equal(await gw.stop(), 0);
  });
});
