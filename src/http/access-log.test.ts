import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog, type LogLevel } from '../common/log.js';
import type { LoggingConfig } from '../config/index.js';
import { createAccessLog, SHED_INTERVAL_MS, SHED_LINES_PER_INTERVAL, type AccessEntry } from './access-log.js';

const WAKE: AccessEntry = { method: 'POST', path: '/hooks/wake', hook: 'wake', client: '127.0.0.1', code: null };

function setup(logging: Partial<LoggingConfig> = {}, level: LogLevel = 'info') {
  const raw: string[] = [];
  let t = 1_764_630_000_000;
  const log = createLog({ level, write: (l) => raw.push(l), repeatIntervalMs: 0 });
  const access = createAccessLog(log, {
    settings: () => ({ access: 'all', accessSample: 1, ...logging }),
    now: () => t,
  });
  return {
    access,
    raw,
    lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const shed = (code = 'store_unavailable'): AccessEntry => ({ ...WAKE, code });

describe('createAccessLog', () => {
  it('writes what the request did, as the info line it always was', () => {
    const s = setup();
    s.access.write({ ...WAKE, eventId: '01a233db-b4a4-7000-963e-5c3e51540d20' }, 200, 3);
    s.access.write({ ...WAKE, hook: null, code: 'not_found' }, 404, 0);
    s.access.write(WAKE, null, 12);
    const [ok, missing, gone] = s.lines() as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    assert.equal(ok['level'], 30);
    assert.equal(ok['msg'], 'hook request');
    assert.equal(ok['pid'], process.pid);
    assert.equal(typeof ok['time'], 'string');
    const fields = ({ level: _l, time: _t, pid: _p, msg: _m, ...rest }: Record<string, unknown>) => rest;
    assert.deepEqual(fields(ok), {
      method: 'POST',
      path: '/hooks/wake',
      hook: 'wake',
      client: '127.0.0.1',
      status: 200,
      code: null,
      ms: 3,
      eventId: '01a233db-b4a4-7000-963e-5c3e51540d20',
    });
    assert.equal(missing['hook'], null);
    assert.equal(missing['code'], 'not_found');
    assert.equal(gone['status'], null);
    assert.equal(gone['code'], 'client_gone');
  });

  it('escapes the caller text in paths and hook names, so every line stays one JSON object', () => {
    const s = setup();
    const path = '/hooks/a"b\\c\u0000d\u2028e\n{"status":200}';
    s.access.write({ ...WAKE, path, hook: path.slice(7) }, 404, 1);
    assert.equal(s.raw.length, 1);
    assert.equal(s.raw[0]!.split('\n').length, 2, 'one line');
    const line = s.lines()[0]!;
    assert.equal(line['path'], path);
    assert.equal(line['hook'], path.slice(7));
    assert.equal(line['status'], 404);
  });

  it('writes only refusals and clients that left with `refusals`', () => {
    const s = setup({ access: 'refusals' });
    s.access.write(WAKE, 200, 1);
    s.access.write(WAKE, 204, 1);
    s.access.write({ ...WAKE, code: 'unauthorized' }, 401, 1);
    s.access.write({ ...WAKE, code: 'internal_error' }, 500, 1);
    s.access.write(WAKE, null, 1);
    assert.deepEqual(
      s.lines().map((l) => l['status']),
      [401, 500, null],
    );
  });

  it('writes nothing with `off`, nor below the info level', () => {
    const off = setup({ access: 'off' });
    off.access.write({ ...WAKE, code: 'unauthorized' }, 401, 1);
    const warn = setup({}, 'warn');
    warn.access.write({ ...WAKE, code: 'unauthorized' }, 401, 1);
    assert.deepEqual([off.raw.length, warn.raw.length], [0, 0]);
  });

  it('writes the sampled share of accepted lines, evenly spaced, and every refusal', () => {
    const s = setup({ accessSample: 0.25 });
    for (let i = 0; i < 8; i++) {
      s.access.write({ ...WAKE, eventId: `e${i}` }, 200, 1);
      s.access.write({ ...WAKE, code: 'unauthorized' }, 401, 1);
    }
    const lines = s.lines();
    assert.deepEqual(
      lines.filter((l) => l['status'] === 200).map((l) => l['eventId']),
      ['e0', 'e4'],
    );
    assert.equal(lines.filter((l) => l['status'] === 401).length, 8);
  });

  it('writes a few lines of shed requests per interval and counts the rest in one line', () => {
    const s = setup();
    for (let i = 0; i < 1_000; i++) s.access.write(shed(i % 4 === 0 ? 'unavailable' : 'store_unavailable'), 503, 0);
    s.access.write({ ...WAKE, code: 'unauthorized' }, 401, 1);
    assert.equal(s.raw.length, SHED_LINES_PER_INTERVAL + 1, 'other lines are not held back');
    s.advance(SHED_INTERVAL_MS);
    s.access.write(shed(), 503, 0);
    const lines = s.lines();
    const summary = lines[SHED_LINES_PER_INTERVAL + 1]!;
    assert.equal(summary['msg'], 'hook requests shed: access lines held back');
    assert.equal(summary['heldBack'], 1_000 - SHED_LINES_PER_INTERVAL);
    assert.deepEqual(summary['codes'], { unavailable: 247, store_unavailable: 743 });
    assert.equal(lines[SHED_LINES_PER_INTERVAL + 2]!['status'], 503, 'a new interval writes its first lines again');
    assert.equal(lines.length, SHED_LINES_PER_INTERVAL + 3);
  });

  it('writes the count held back when flushed (shutdown), once', () => {
    const s = setup();
    for (let i = 0; i < SHED_LINES_PER_INTERVAL + 5; i++) s.access.write(shed(), 503, 0);
    s.access.flush();
    s.access.flush();
    const held = s.lines().filter((l) => l['heldBack'] !== undefined);
    assert.deepEqual(
      held.map((l) => l['heldBack']),
      [5],
    );
  });

  it('writes the count held back once the interval ends, with no shed request after it', () => {
    const raw: string[] = [];
    const log = createLog({ write: (l) => raw.push(l), repeatIntervalMs: 0 });
    const due: Array<{ fn: () => void; ms: number }> = [];
    const access = createAccessLog(log, {
      now: () => 0,
      schedule: (fn, ms) => {
        due.push({ fn, ms });
        return () => undefined;
      },
    });
    for (let i = 0; i < SHED_LINES_PER_INTERVAL + 3; i++) access.write(shed(), 503, 0);
    assert.deepEqual(
      due.map((d) => d.ms),
      [SHED_INTERVAL_MS],
      'one timer, for the interval end',
    );
    due[0]!.fn();
    assert.ok(raw.at(-1)!.includes('"heldBack":3'));
  });
});
