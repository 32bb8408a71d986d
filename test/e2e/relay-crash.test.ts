/**
 * The pull relay under a storm, with its home killed: a relay and a home gateway as child
 * processes, a sender signing for GitHub posting 5,000 requests to the relay (some repeated, some
 * forged, some signed with a key the home has since rotated) while the home is `kill -9`ed five
 * times and restarted. Afterwards the home holds every accepted request exactly once, and each
 * request's verdict is the one a direct post to the home gets. Loopback only; every child is
 * stopped by its pid.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../src/config/index.js';
import { openStore } from '../../src/main.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { send, type HttpResult } from '../helpers/http-client.js';
import { signGithub } from '../helpers/sign-webhooks.js';
import { baseConfig, createTempConfig, GATEWAY_TOKEN, HOOK_TOKEN } from '../helpers/temp-config.js';

const RELAY_TOKEN = 'test-relay-token-storm-93be01d4';
const GITHUB_SECRET = 'gh-storm-secret-7e21';
const TOTAL = 5000;
const KILLS = 5;
/** The sender's pace: one request every this many ms (about 500 a second), at most `IN_FLIGHT` at once. */
const PACE_MS = 2;
const IN_FLIGHT = 32;

type Kind = 'valid' | 'repeat' | 'forged' | 'rotated';
/** What became of a request in the end: taken by the home, or refused (by whom matters not) with a status. */
type Verdict = 'accepted' | `refused ${number}`;

interface Sent {
  n: number;
  kind: Kind;
  path: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * Request `n` of the storm: mostly valid, every 25th forged, every 29th signed with the key the home
 * rotated, every 31st a repeat of a valid one before it.
 */
function storm(n: number): Sent {
  const base = (i: number): Kind => (i % 25 === 7 ? 'forged' : i % 29 === 11 ? 'rotated' : 'valid');
  const kind: Kind = base(n) === 'valid' && n % 31 === 13 && base(n - 1) === 'valid' ? 'repeat' : base(n);
  // A repeat is GitHub's redelivery of the request before it: the same body and delivery id.
  const of = kind === 'repeat' ? n - 1 : n;
  const body = JSON.stringify({ n: of, kind: kind === 'repeat' ? 'valid' : kind, ref: 'refs/heads/main' });
  const secret =
    kind === 'forged' ? 'not-the-secret' : kind === 'rotated' ? 'relay-side-key-0123456789' : GITHUB_SECRET;
  return {
    n,
    kind,
    path: kind === 'rotated' ? '/hooks/rotated' : '/hooks/github',
    body,
    headers: { ...signGithub(secret, body, `delivery-${of}`), 'content-type': 'application/json' },
  };
}

function mappings(rotatedSecret: string): unknown[] {
  const wake = { action: 'wake', wakeMode: 'next-heartbeat', textTemplate: '{{ payload.kind }} {{ payload.n }}' };
  return [
    { id: 'github', match: { path: 'github' }, ...wake, verify: { kind: 'github', secret: GITHUB_SECRET } },
    { id: 'rotated', match: { path: 'rotated' }, ...wake, verify: { kind: 'github', secret: rotatedSecret } },
  ];
}

const post = (port: number, s: Sent, agent?: Agent): Promise<HttpResult> =>
  send(port, s.path, { auth: false, body: s.body, headers: s.headers, ...(agent === undefined ? {} : { agent }) });

async function relayBacklog(port: number): Promise<{ pending: number; dead: number }> {
  const r = await send(port, '/admin/api/relay', { method: 'GET', auth: GATEWAY_TOKEN });
  return (r.json as { backlog: { pending: number; dead: number } }).backlog;
}

describe('pull relay under a storm, its home killed', () => {
  const children: GatewayProcess[] = [];
  const cleanups: Array<() => void> = [];
  after(async () => {
    for (const c of children) await c.kill();
    for (const c of cleanups) c();
  });

  it('loses nothing and duplicates nothing across five kill -9 of the home, verdicts as for a direct post', {
    timeout: 120_000,
  }, async (t) => {
    const relayPort = await freePort();
    const homePort = await freePort();
    const relayTemp = createTempConfig(
      baseConfig({
        gateway: { port: relayPort, logLevel: 'error' },
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: mappings('relay-side-key-0123456789'),
          authRateLimit: { maxFailures: 6000, windowSeconds: 600, lockoutSeconds: 600 },
        },
        relay: { enabled: true, token: RELAY_TOKEN, leaseSeconds: 2, maxLeases: 50 },
      }),
    );
    const homeTemp = createTempConfig(
      baseConfig({
        gateway: { port: homePort, logLevel: 'error' },
        hooks: { enabled: true, token: HOOK_TOKEN, mappings: mappings('home-side-key-0123456789') },
        pull: { url: `http://127.0.0.1:${relayPort}`, token: RELAY_TOKEN, waitSeconds: 1, retryMaxSeconds: 1 },
      }),
    );
    cleanups.push(relayTemp.cleanup, homeTemp.cleanup);
    const relay = await spawnGateway(['--config', relayTemp.path], relayPort);
    children.push(relay);
    const startHome = async (): Promise<GatewayProcess> => {
      const home = await spawnGateway(['--config', homeTemp.path], homePort);
      children.push(home);
      return home;
    };
    let home = await startHome();

    // The verdict of a direct post to the home, for each kind (fresh deliveries, outside the storm's numbering).
    const direct = new Map<Kind, Verdict>();
    for (const kind of ['valid', 'forged', 'rotated'] as const) {
      const sample = storm(kind === 'valid' ? 0 : kind === 'forged' ? 7 : 11);
      const body = sample.body.replace(/"n":\d+/, '"n":-1');
      const secret =
        kind === 'forged' ? 'not-the-secret' : kind === 'rotated' ? 'relay-side-key-0123456789' : GITHUB_SECRET;
      const r = await post(homePort, {
        ...sample,
        body,
        headers: { ...signGithub(secret, body, `direct-${kind}`), 'content-type': 'application/json' },
      });
      direct.set(kind, r.status === 200 ? 'accepted' : `refused ${r.status}`);
    }
    direct.set('repeat', direct.get('valid')!);
    assert.deepEqual(Object.fromEntries(direct), {
      valid: 'accepted',
      forged: 'refused 401',
      rotated: 'refused 401',
      repeat: 'accepted',
    });

    // The storm, paced, against the relay; the home is killed and restarted meanwhile.
    const answers = new Map<number, HttpResult>();
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const started = Date.now();
    let next = 0;
    const sender = async (): Promise<void> => {
      while (next < TOTAL) {
        const n = next++;
        const due = started + n * PACE_MS - Date.now();
        if (due > 0) await sleep(due);
        answers.set(n, await post(relayPort, storm(n), agent));
      }
    };
    const senders = Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    let kills = 0;
    const killer = (async () => {
      const stormMs = TOTAL * PACE_MS;
      for (; kills < KILLS; ) {
        // Spread over the storm: each kill a random moment in its share of it, after the home came up.
        await sleep(Math.floor(stormMs / (KILLS + 1)) * (0.5 + Math.random() * 0.5));
        await home.kill();
        kills++;
        home = await startHome();
      }
    })();
    await Promise.all([senders, killer]);
    agent.destroy();
    t.diagnostic(`storm of ${TOTAL} sent in ${Date.now() - started} ms with ${kills} kills of the home`);

    // Every relay answer is the door's: 202 for a verified request (a repeat: the first one's id), 401 for a forgery.
    const unexpected: string[] = [];
    const firstId = new Map<number, string>();
    for (let n = 0; n < TOTAL; n++) {
      const s = storm(n);
      const a = answers.get(n)!;
      const want = s.kind === 'forged' ? 401 : 202;
      if (a.status !== want) unexpected.push(`${n} ${s.kind}: ${a.status} ${a.text}`);
      if (a.status === 202) {
        const id = (a.json as { id: string }).id;
        if (s.kind === 'repeat' && firstId.get(n - 1) !== id)
          unexpected.push(`${n}: a repeat answered with another id`);
        firstId.set(n, id);
      }
    }
    assert.deepEqual(unexpected.slice(0, 10), [], `${unexpected.length} unexpected relay answers`);

    // The home drains the relay (what it held when killed comes back after its 2 s lease).
    const deadline = Date.now() + 60_000;
    let backlog = await relayBacklog(relayPort);
    while (backlog.pending > 0 && Date.now() < deadline) {
      await sleep(200);
      backlog = await relayBacklog(relayPort);
    }
    assert.equal(backlog.pending, 0, 'the home took everything');
    assert.equal(await home.stop(), 0, `the home stops cleanly: ${home.output().stderr}`);

    const store = await openStore(readConfig(homeTemp.path, {}), { mode: 'read' });
    const counts = new Map<string, number>();
    try {
      for (const e of await store.listSystemEvents({ limit: 1_000_000 }))
        counts.set(e.text, (counts.get(e.text) ?? 0) + 1);
    } finally {
      await store.close();
    }
    const verdict = (s: Sent): Verdict => {
      if (answers.get(s.n)!.status === 401) return 'refused 401';
      const of = s.kind === 'repeat' ? s.n - 1 : s.n;
      return (counts.get(`${s.kind === 'repeat' ? 'valid' : s.kind} ${of}`) ?? 0) > 0 ? 'accepted' : 'refused 401';
    };
    const lost: number[] = [];
    const duplicated: number[] = [];
    const verdictsDiffer: string[] = [];
    for (let n = 0; n < TOTAL; n++) {
      const s = storm(n);
      if (s.kind === 'valid') {
        const c = counts.get(`valid ${n}`) ?? 0;
        if (c === 0) lost.push(n);
        if (c > 1) duplicated.push(n);
      }
      if (verdict(s) !== direct.get(s.kind)) verdictsDiffer.push(`${n} ${s.kind}: ${verdict(s)}`);
    }
    const valid = Array.from({ length: TOTAL }, (_, n) => storm(n)).filter((s) => s.kind === 'valid').length;
    t.diagnostic(`home holds ${counts.size - 1} distinct wakes for ${valid} valid requests`);
    assert.deepEqual(lost.slice(0, 10), [], `${lost.length} accepted requests lost`);
    assert.deepEqual(duplicated.slice(0, 10), [], `${duplicated.length} requests acted on twice`);
    assert.deepEqual(verdictsDiffer.slice(0, 10), [], `${verdictsDiffer.length} verdicts unlike a direct post`);
    assert.equal(counts.get('valid -1'), 1, "the direct sample, the home's own");
    assert.equal([...counts.keys()].filter((k) => !k.startsWith('valid ')).length, 0, 'nothing forged or rotated');

    // What the home refused waits at the relay as a dead letter with the home's reason.
    const rotated = Array.from({ length: TOTAL }, (_, n) => storm(n)).filter((s) => s.kind === 'rotated').length;
    assert.equal(backlog.dead, rotated);
    const dead = await send(relayPort, `/admin/api/relay?state=dead&limit=500`, { method: 'GET', auth: GATEWAY_TOKEN });
    const letters = (dead.json as { requests: Array<{ hook: string; status: number; code: string }> }).requests;
    assert.deepEqual(
      [...new Set(letters.map((l) => `${l.hook} ${l.status} ${l.code}`))],
      ['rotated 401 signature_invalid'],
    );
    assert.equal(await relay.stop(), 0, `the relay stops cleanly: ${relay.output().stderr}`);
    const relayStore = await openStore(readConfig(relayTemp.path, {}), { mode: 'read' });
    try {
      const all = await relayStore.listRelayRequests({ limit: 1_000_000 });
      const again = all.filter((r) => r.attempts > 1).length;
      t.diagnostic(`the relay leased ${again} requests more than once (held by a home when it was killed)`);
    } finally {
      await relayStore.close();
    }
  });
});
