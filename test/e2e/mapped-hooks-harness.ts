/**
 * Shared by the mapped-hooks end-to-end tests: a gateway started in this process from a temp
 * config dir with transform modules written under `<dir>/hooks/transforms/`, whose log lines are
 * captured, plus store look-ups that wait for runs to finish.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig, type LoadedConfig } from '../../src/config/index.js';
import { startGateway, type Gateway, type GatewayDeps } from '../../src/main.js';
import type { RunRecord, SystemEventRecord } from '../../src/store/index.js';
import type { HttpResult } from '../helpers/http-client.js';
import { createTempConfig, createTempDir, type ConfigDoc } from '../helpers/temp-config.js';

export interface MappedGateway {
  port: number;
  gateway: Gateway;
  loaded: LoadedConfig;
  /** The config directory. */
  dir: string;
  /** `<dir>/hooks/transforms`. */
  transformsDir: string;
  /** Every log line the gateway wrote, level `debug` and up. */
  logLines: string[];
  /** (Re)writes a transform module and sets its mtime `mtimeOffsetSeconds` past a fixed point. */
  writeTransform(rel: string, source: string, mtimeOffsetSeconds?: number): string;
  /** The stored run behind a 202 response. */
  /** The stored run behind a 202 (the first item's, for a `forEach` mapping). */
  runOf(res: HttpResult): Promise<RunRecord>;
  /** The stored system event behind a wake's 200 response. */
  eventOf(res: HttpResult): Promise<SystemEventRecord>;
  /** Waits until the run has finished (succeeded, failed or timed out). */
  waitForRun(id: string, timeoutMs?: number): Promise<RunRecord>;
  /** Closes the gateway and removes the directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** A fixed base for transform mtimes, so reload order never depends on the wall clock. */
const MTIME_BASE_MS = Date.UTC(2030, 0, 1);

function writeModule(transformsDir: string, rel: string, source: string, mtimeOffsetSeconds: number): string {
  const file = join(transformsDir, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  const t = new Date(MTIME_BASE_MS + mtimeOffsetSeconds * 1000);
  utimesSync(file, t, t);
  return file;
}

/**
 * Writes `transforms` (path relative to the transforms dir → source), then `config` as
 * `hookgate.json`, loads it as the CLI would, and starts the gateway on port 0.
 */
export async function startMappedGateway(
  config: ConfigDoc,
  options: { transforms?: Record<string, string>; runtime?: NonNullable<GatewayDeps['runtime']> } = {},
): Promise<MappedGateway> {
  const dir = createTempDir('hookgate-mapped-');
  const transformsDir = join(dir, 'hooks', 'transforms');
  mkdirSync(transformsDir, { recursive: true });
  const logLines: string[] = [];
  let gateway: Gateway;
  let loaded: LoadedConfig;
  try {
    for (const [rel, source] of Object.entries(options.transforms ?? {})) writeModule(transformsDir, rel, source, 0);
    const temp = createTempConfig(config, { dir });
    loaded = readConfig(temp.path, {});
    gateway = await startGateway(loaded, {
      port: 0,
      log: createLog({ level: 'debug', write: (line) => logLines.push(line) }),
      runtime: { coalesceMs: 20, pollMs: 100, ...options.runtime },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const store = gateway.store;
  let stopped = false;
  return {
    port: gateway.port,
    gateway,
    loaded,
    dir,
    transformsDir,
    logLines,
    writeTransform: (rel, source, mtimeOffsetSeconds = 0) =>
      writeModule(transformsDir, rel, source, mtimeOffsetSeconds),
    async runOf(res) {
      assert.equal(res.status, 202, res.text);
      // A forEach mapping answers `items`; the first item's run stands for the request.
      const body = res.json as { runId?: unknown; items?: Array<{ runId?: unknown }> };
      const runId = body.runId ?? body.items?.[0]?.runId;
      assert.equal(typeof runId, 'string', res.text);
      const run = await store.getRun(String(runId));
      assert.ok(run !== null, `run ${String(runId)} is stored`);
      return run;
    },
    async eventOf(res) {
      assert.equal(res.status, 200, res.text);
      const eventId = (res.json as { eventId?: unknown }).eventId;
      assert.equal(typeof eventId, 'string', res.text);
      const event = (await store.listSystemEvents({ limit: 10_000 })).find((e) => e.id === eventId);
      assert.ok(event !== undefined, `event ${String(eventId)} is stored`);
      return event;
    },
    async waitForRun(id, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const run = await store.getRun(id);
        if (run !== null && run.state !== 'queued' && run.state !== 'running') return run;
        if (Date.now() > end) throw new Error(`run ${id} still ${run?.state ?? 'missing'} after ${timeoutMs} ms`);
        await sleep(25);
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await gateway.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Polls `check` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
