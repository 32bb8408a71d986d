/**
 * Catching up after downtime against fakes of GitHub's and Stripe's APIs: the gateway is stopped
 * while the provider sends a storm (its attempts fail to connect, as they would), and after the
 * restart every event is handled exactly once, through the mapping, recorded as a catch-up.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { openStore, startGateway, type Gateway } from '../../src/main.js';
import { createFakeGithubApi, type FakeGithubApi } from '../fakes/fake-github-api.js';
import { createFakeStripeApi, type FakeStripeApi } from '../fakes/fake-stripe-api.js';
import { freePort } from '../helpers/gateway-process.js';
import { runCliInProcess, type InProcessCliResult } from '../helpers/run-cli-in-process.js';
import { send } from '../helpers/http-client.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { postgresUnavailable, POSTGRES_URL, dropSchema, uniqueSchema } from '../helpers/store-fixture.js';
import { createTempConfig, createTempDir, GATEWAY_TOKEN, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const GH_TOKEN = 'ghp_catchUpTokenThatMustNeverBeLogged01';
const STRIPE_KEY = 'sk_test_catchUpKeyThatMustNeverBeLogged';
const GH_SECRET = 'github-webhook-secret-3f9a';
const STRIPE_SECRET = 'whsec_stripeEndpointSecret7c2e';
const ENV = { GH_CATCHUP_TOKEN: GH_TOKEN, STRIPE_CATCHUP_KEY: STRIPE_KEY };
const STORM = 250;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Harness {
  port: number;
  path: string;
  gateway: Gateway | null;
  logs: string[];
  /** Starts the gateway and waits for its first catch-up pass to end. */
  start(): Promise<Gateway>;
  stop(): Promise<void>;
  cli(...args: string[]): Promise<InProcessCliResult>;
  /** How many times each numbered event became a wake on the main session. */
  counts(): Promise<Map<number, number>>;
}

/** A gateway on a fixed port (the providers' webhooks point at it) whose config has the two catch-up mappings. */
async function harness(o: {
  github?: FakeGithubApi;
  stripe?: FakeStripeApi;
  githubCatchUp?: Record<string, unknown>;
  stripeCatchUp?: Record<string, unknown>;
  store?: ConfigDoc;
  port?: number;
}): Promise<Harness> {
  const port = o.port ?? (await freePort());
  const mappings: ConfigDoc[] = [];
  // Wakes for the next periodic heartbeat (off): each event is one pending system event to count.
  const wake = { action: 'wake', wakeMode: 'next-heartbeat' };
  if (o.githubCatchUp !== undefined) {
    mappings.push({
      id: 'github',
      match: { path: 'github' },
      ...wake,
      textTemplate: 'github #{{number}} {{action}}',
      verify: { kind: 'github', secret: GH_SECRET },
      catchUp: { provider: 'github', tokenEnv: 'GH_CATCHUP_TOKEN', every: 0, ...o.githubCatchUp },
    });
  }
  if (o.stripeCatchUp !== undefined) {
    mappings.push({
      id: 'stripe',
      match: { path: 'stripe' },
      ...wake,
      textTemplate: 'stripe #{{data.object.number}} {{type}}',
      verify: { kind: 'stripe', secret: STRIPE_SECRET },
      catchUp: { provider: 'stripe', tokenEnv: 'STRIPE_CATCHUP_KEY', every: 0, ...o.stripeCatchUp },
    });
  }
  const config: ConfigDoc = {
    gateway: { bind: '127.0.0.1', port, auth: { token: GATEWAY_TOKEN }, logLevel: 'info', recordPayloads: true },
    hooks: { enabled: true, token: HOOK_TOKEN, mappings },
    agents: { defaults: { heartbeat: { every: 0 } }, list: [{ id: 'main', default: true }] },
    store: o.store ?? { driver: 'sqlite', path: 'state/hookgate.db', sync: 'normal' },
  };
  const dir = createTempDir('hookgate-catch-up-');
  const temp = createTempConfig(config, { dir });
  const logs: string[] = [];
  const log = createLog({ level: 'debug', write: (line: string) => logs.push(line) });
  const h: Harness = {
    port,
    path: temp.path,
    gateway: null,
    logs,
    async start() {
      const passes = (): number => logs.filter((l) => l.includes('"msg":"catch-up pass')).length;
      const before = passes();
      const gw = await startGateway(readConfig(temp.path, ENV), { port, log, runtime: { pollMs: 50 } });
      h.gateway = gw;
      await until('the first catch-up pass', async () => passes() >= before + mappings.length);
      return gw;
    },
    async stop() {
      await h.gateway?.close();
      h.gateway = null;
    },
    cli: (...args) => runCliInProcess(temp.path, args, ENV),
    async counts() {
      const store = h.gateway?.store ?? (await openStore(readConfig(temp.path, ENV), { mode: 'read' }));
      try {
        const events = await store.listSystemEvents({ limit: 10_000 });
        const out = new Map<number, number>();
        for (const e of events) {
          const n = Number(/#(\d+)/.exec(e.text)?.[1]);
          out.set(n, (out.get(n) ?? 0) + 1);
        }
        return out;
      } finally {
        if (h.gateway === null) await store.close();
      }
    },
  };
  cleanups.push(async () => {
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return h;
}

const exactlyOnce = (counts: Map<number, number>, total: number): void => {
  const wrong = [...counts].filter(([, c]) => c !== 1);
  assert.deepEqual(wrong, [], 'no event twice');
  assert.equal(counts.size, total, 'every event');
};

async function githubStorm(redeliver: boolean, store?: ConfigDoc): Promise<{ h: Harness; api: FakeGithubApi }> {
  let port = 0;
  const api = await createFakeGithubApi({
    token: GH_TOKEN,
    repo: 'octo-org/hello-world',
    hookId: 421_337,
    secret: GH_SECRET,
    target: () => `http://127.0.0.1:${port}/hooks/github`,
  });
  cleanups.push(() => api.close());
  const h = await harness({
    githubCatchUp: { repo: 'octo-org/hello-world', hookId: 421_337, apiBaseUrl: api.url, redeliver },
    ...(store === undefined ? {} : { store }),
  });
  port = h.port;
  await h.start();
  const pr = (n: number) => ({ action: 'opened', number: n, pull_request: { id: 1_000_000 + n, number: n } });
  for (let n = 1; n <= 3; n++) assert.equal((await api.send('pull_request', pr(n))).status_code, 200);
  await h.stop();
  for (let n = 4; n <= 3 + STORM; n++) {
    const d = await api.send('pull_request', pr(n));
    assert.equal(d.status, 'failed to connect to host');
  }
  return { h, api };
}

describe('catching up with GitHub', () => {
  it('handles every delivery of a storm missed while stopped exactly once, through the mapping', async () => {
    const { h, api } = await githubStorm(false);
    const gw = await h.start();
    await until('every event', async () => (await h.counts()).size === 3 + STORM);
    exactlyOnce(await h.counts(), 3 + STORM);
    const lists = api.calls.filter((c) => c.path.endsWith('/deliveries') && c.method === 'GET');
    assert.ok(lists.length >= 3, `pages read: ${lists.length}`);
    assert.ok(
      lists.some((c) => c.query.get('cursor')?.startsWith('v1_')),
      'followed the Link cursor',
    );
    assert.ok(api.calls.every((c) => c.authorization === `Bearer ${GH_TOKEN}`));
    const details = api.calls.filter((c) => /\/deliveries\/\d+$/.test(c.path));
    assert.equal(details.length, STORM, 'the detail of each missed delivery, none of those that arrived');
    const caught = (await gw.store.listRequests({ limit: 500, hook: 'github' })).filter(
      (r) => r.client === 'catch-up:github',
    );
    assert.equal(caught.length, STORM, 'each recorded in the request log as a catch-up');
    assert.ok(caught.every((r) => r.status === 200 && r.eventIds.length === 1));
    assert.ok(caught[0]!.payload?.includes('"action":"opened"'));
    // Another pass, by hand, reads the same window again: nothing is handled twice.
    const again = await h.cli('catch-up', '--mapping', 'github', '--since', '1h');
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      new RegExp(
        `mapping "github" \\(github\\) from .*: ${3 + STORM} deliveries listed, ${STORM} missed \\(${STORM} already here\\)\\.`,
      ),
    );
    exactlyOnce(await h.counts(), 3 + STORM);
    assert.ok(!h.logs.some((l) => l.includes(GH_TOKEN)), 'the token is never logged');
    assert.ok(h.logs.some((l) => l.includes('catch-up pass')));
    const metrics = parseMetrics((await send(h.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text);
    assert.equal(
      metricValue(metrics, 'hookgate_catch_up_events_total', { mapping: 'github', outcome: 'accepted' }),
      STORM,
    );
    assert.equal(metricValue(metrics, 'hookgate_catch_up_passes_total', { mapping: 'github', outcome: 'done' }), 1);
  });

  it('asks GitHub to redeliver with redeliver: true, and each arrives signed, once', async () => {
    const { h, api } = await githubStorm(true);
    await h.start();
    await until('every event', async () => (await h.counts()).size === 3 + STORM);
    exactlyOnce(await h.counts(), 3 + STORM);
    assert.equal(api.calls.filter((c) => c.path.endsWith('/attempts')).length, STORM);
    assert.equal(api.deliveries.filter((d) => d.redelivery && d.status_code === 200).length, STORM);
    const r = await h.cli('catch-up', '--mapping', 'github');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, / 0 missed\./, 'redelivered ones count as delivered');
    assert.equal(api.calls.filter((c) => c.path.endsWith('/attempts')).length, STORM, 'none redelivered twice');
  });

  it('passes over a delivery the gateway answered with a deliberate 4xx', async () => {
    let port = 0;
    const api = await createFakeGithubApi({
      token: GH_TOKEN,
      org: 'octo-org',
      hookId: 7,
      secret: 'not-the-secret-the-gateway-knows',
      target: () => `http://127.0.0.1:${port}/hooks/github`,
    });
    cleanups.push(() => api.close());
    const h = await harness({ githubCatchUp: { org: 'octo-org', hookId: 7, apiBaseUrl: api.url } });
    port = h.port;
    await h.start();
    assert.equal((await api.send('issues', { action: 'opened', number: 1 })).status_code, 401);
    const r = await h.cli('catch-up', '--since', '10m');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /1 delivery listed, 0 missed\./);
    assert.equal((await h.counts()).size, 0);
  });

  it('reports a refused token without ever printing it, and exits 1', async () => {
    const api = await createFakeGithubApi({
      token: 'another-token',
      repo: 'o/r',
      hookId: 1,
      secret: 's',
      target: () => '',
    });
    cleanups.push(() => api.close());
    const h = await harness({ githubCatchUp: { repo: 'o/r', hookId: 1, apiBaseUrl: api.url } });
    await h.start();
    const r = await h.cli('catch-up');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /stopped: GET \/repos\/o\/r\/hooks\/1\/deliveries: HTTP 401 \(Bad credentials\)/);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(GH_TOKEN));
  });
});

describe('catching up with Stripe', () => {
  const storm = async (catchUp: Record<string, unknown> = {}) => {
    let port = 0;
    const api = await createFakeStripeApi({
      apiKey: STRIPE_KEY,
      secret: STRIPE_SECRET,
      target: () => `http://127.0.0.1:${port}/hooks/stripe`,
    });
    cleanups.push(() => api.close());
    const h = await harness({ stripeCatchUp: { apiBaseUrl: api.url, ...catchUp } });
    port = h.port;
    await h.start();
    const invoice = (n: number) => ({ id: `in_${n}`, object: 'invoice', number: n, status: 'paid' });
    for (let n = 1; n <= 3; n++) assert.equal((await api.emit('invoice.paid', invoice(n))).status, 200);
    await h.stop();
    for (let n = 4; n <= 3 + STORM; n++) assert.equal((await api.emit('invoice.paid', invoice(n))).status, 0);
    return { h, api };
  };

  it('handles every event of a storm missed while stopped exactly once, from the last one seen', async () => {
    const { h, api } = await storm();
    const gw = await h.start();
    await until('every event', async () => (await h.counts()).size === 3 + STORM);
    exactlyOnce(await h.counts(), 3 + STORM);
    const lists = api.requests.filter((r) => r.path.startsWith('/v1/events'));
    assert.ok(lists.length >= 3, 'pages of 100');
    const q = new URL(lists.at(-1)!.path, 'http://x').searchParams;
    assert.equal(q.get('delivery_success'), 'false');
    assert.equal(q.get('limit'), '100');
    assert.ok(q.get('starting_after')?.startsWith('evt_'), 'paginated by starting_after');
    assert.ok(Number(q.get('created[gte]')) > 0);
    const caught = (await gw.store.listRequests({ limit: 500, hook: 'stripe' })).filter(
      (r) => r.client === 'catch-up:stripe',
    );
    if (caught.length !== STORM) {
      const ids = new Map<string, number>();
      for (const c of caught) ids.set(c.id, (ids.get(c.id) ?? 0) + 1);
      const evs = new Map<string, number>();
      for (const c of caught) {
        const id = /"id":"(evt_\w+)"/.exec(c.payload ?? '')?.[1] ?? '?';
        evs.set(id, (evs.get(id) ?? 0) + 1);
      }
      console.log(
        'DBG',
        [...evs].filter(([, n]) => n > 1),
        caught.filter((c) => c.eventIds.length !== 1).map((c) => [c.payload?.slice(0, 80), c.at]),
        api.events.slice(0, 4).map((e) => [e.id, e.pending_webhooks]),
      );
    }
    assert.equal(caught.length, STORM);
    const [position] = await gw.store.listCatchUps();
    assert.equal(position?.lastId, api.events.at(-1)!.id, 'the last event handled is remembered');
    assert.ok(!h.logs.some((l) => l.includes(STRIPE_KEY)));
  });

  it('recognises the events that arrived already when every event is listed (missedOnly: false)', async () => {
    const { h } = await storm({ missedOnly: false });
    const r = await h.cli('catch-up', '--mapping', 'stripe');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`${3 + STORM} events listed, ${3 + STORM} missed \\(${STORM} accepted, 3 already here\\)`),
    );
    exactlyOnce(await h.counts(), 3 + STORM);
  });
});

describe('catching up on PostgreSQL', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    it('PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  it('handles a GitHub storm exactly once on a store a fleet shares', async () => {
    const schema = uniqueSchema('hg_catchup');
    cleanups.push(() => dropSchema(schema));
    const { h } = await githubStorm(false, { driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4 });
    await h.start();
    await until('every event', async () => (await h.counts()).size === 3 + STORM);
    exactlyOnce(await h.counts(), 3 + STORM);
  });
});
