/**
 * Structured JSON-lines logger (pino): numeric levels (debug 20, info 30, warn 40, error 50) so
 * `pino-pretty` and log shippers filter by level. Callers pass fields, never tokens or raw payloads;
 * what slips through anyway is redacted twice: by key name at any depth, and by pino's paths.
 */
import pino from 'pino';
import { createRepeatLimiter, type RepeatLimiter } from './create-repeat-limiter.js';
import { keepText, type Scrub } from './scrub-secrets.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Log {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Log;
  /**
   * A writer of one kind of line whose fields the caller hands over as JSON text (members without
   * the braces: `"status":200,"ms":3`), for a line written per request whose fields are fixed and
   * hold nothing to redact (the access line): the key and path redaction passes, which cost more
   * than the rest of such a line, are skipped. Level number, time, bindings and message are as on
   * every line, and it goes through the same destination. `null` when `level` is not written.
   */
  fixedLine(level: Level, msg: string): FixedLine | null;
  /** Writes held-back repeat summaries and every buffered line, synchronously (shutdown, fatal exit). */
  flush(): void;
}

/** Writes one line; `fields` is JSON members text, see `Log.fixedLine`. */
export type FixedLine = (fields: string) => void;

/**
 * Keys whose values are replaced before a line is written, wherever they appear. A token is a
 * secret; token counts (`tokens`, `inputTokens`, `maxTokens`, `tokenCount`, `token_usage`) are not.
 */
const SECRET_KEY = /token(?!s|[-_]?(?:count|usage))|password|secret|authorization|api[-_]?key|cookie/i;
const CENSOR = '[redacted]';
/** Objects nested deeper than this are cut, not written unredacted. */
const MAX_DEPTH = 8;

/**
 * Fields that must never carry their value, by path: request bodies and headers wherever a caller
 * attaches them whole. The key-name pass cannot know that `payload` is a payload.
 */
export const REDACT_PATHS: readonly string[] = [
  'payload',
  '*.payload',
  'body',
  '*.body',
  'rawBody',
  '*.rawBody',
  'headers.cookie',
  '*.headers.cookie',
  'headers["x-hookgate-token"]',
  '*.headers["x-hookgate-token"]',
  'headers["x-openclaw-token"]',
  '*.headers["x-openclaw-token"]',
];

/** Secret keys by name at any depth; errors as fields, their message and stack scrubbed (services echo keys in them). */
function redactKeys(value: unknown, depth: number, seen: WeakSet<object>, scrub: Scrub): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    const out: LogFields = {
      type: value.name,
      message: scrub(value.message),
      stack: value.stack === undefined ? undefined : scrub(value.stack),
    };
    if (code !== undefined) out['code'] = code;
    if (value.cause !== undefined) out['cause'] = redactKeys(value.cause, depth + 1, seen, scrub);
    return out;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactKeys(v, depth + 1, seen, scrub));
  const out: LogFields = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEY.test(k) ? CENSOR : redactKeys(v, depth + 1, seen, scrub);
  return out;
}

export interface LogOptions {
  /** Minimum level written. @default 'info' */
  level?: LogLevel;
  /** Sink for each line (tests). @default stderr, written asynchronously and flushed at exit */
  write?: (line: string) => void;
  bindings?: LogFields;
  /** Window in which identical `warn`/`error` lines are counted, not written; 0 turns it off. @default 10000 */
  repeatIntervalMs?: number;
  /** @default Date.now */
  now?: () => number;
  /** Applied to every logged error's message and stack. @default keepText */
  scrub?: Scrub;
  /**
   * Bytes of lines waiting for stderr at most (a stalled journald or pipe); the lines past it are
   * dropped and counted, and a warning says how many once stderr takes lines again.
   * @default 16 MiB
   */
  maxBufferedBytes?: number;
}

/** Fixed lines are handed to stderr at this size (sonic-boom's write size)… */
const GATHERED_MAX_CHARS = 16 * 1024;
/** …or this long after the first of them, whichever comes first. */
const GATHERED_MAX_MS = 50;

/** Lines waiting for stderr, at most (bytes): beyond it a blocked stderr costs lines, not memory. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

type Level = Exclude<LogLevel, 'silent'>;

/** The second an ISO time's prefix (`2026-12-01T23:06:06.`) was made for, and that prefix. */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()` for a whole-ms time, its date and second made once a second: a
 * line's time costs a few string operations instead of a Date and its formatting.
 */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    isoSecond = second;
  }
  const frac = ms - second * 1000;
  return `${isoPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
}

/** pino's `timestamp` option: the line's time as `isoTime` writes it. */
const timestamp = (): string => `,"time":"${isoTime(Date.now())}"`;

/**
 * What makes two lines with one message the same failure: the error's message and code. Two
 * different transforms failing are two kinds; one transform failing a thousand times is one.
 */
function errorKey(fields: LogFields): string {
  const err = fields['err'];
  const e = err !== null && typeof err === 'object' ? (err as LogFields) : {};
  return JSON.stringify([e['message'] ?? null, e['code'] ?? fields['code'] ?? null, fields['error'] ?? null]);
}

/** What a logger and its children share. */
interface Shared {
  limiter: RepeatLimiter | null;
  now: () => number;
  flush: () => void;
  scrub: Scrub;
  /** Writes a whole line of a fixed writer (`Log.fixedLine`). */
  writeFixed: (line: string) => void;
}

function wrap(p: pino.Logger, shared: Shared): Log {
  const { limiter, now, scrub } = shared;
  const emit = (level: Level, msg: string, fields?: LogFields): void => {
    if (!p.isLevelEnabled(level)) return;
    const obj = redactKeys(fields ?? {}, 0, new WeakSet(), scrub) as LogFields;
    if (limiter !== null && (level === 'warn' || level === 'error')) {
      const d = limiter.take(`${level}\u0000${msg}\u0000${errorKey(obj)}`, now());
      if (d.kind === 'drop') return;
      if (d.kind === 'summary') {
        p[level]({ ...obj, repeated: d.count }, `${msg} (repeated ${d.count} times)`);
        return;
      }
    }
    p[level](obj, msg);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => wrap(p.child(redactKeys(fields, 0, new WeakSet(), scrub) as LogFields), shared),
    fixedLine: (level, msg) => {
      if (!p.isLevelEnabled(level)) return null;
      // `,"pid":…` and the child's bindings, as pino writes them after the time.
      const bindings = (p as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym] as string;
      const head = `{"level":${p.levels.values[level]},"time":"`;
      const tail = `,"msg":${JSON.stringify(msg)}}\n`;
      const { writeFixed } = shared;
      return (fields) => writeFixed(`${head}${isoTime(Date.now())}"${bindings},${fields}${tail}`);
    },
    flush: shared.flush,
  };
}

/** Creates the logger; children share its destination and its repeat limiter. */
export function createLog(options: LogOptions = {}): Log {
  const level = options.level ?? 'info';
  const now = options.now ?? Date.now;
  const sink = options.write;
  const destination =
    sink === undefined
      ? pino.destination({ dest: 2, sync: false, maxLength: options.maxBufferedBytes ?? MAX_BUFFERED_BYTES })
      : undefined;
  let dropped = 0;
  // Emitted in the write that found no room, so a report that is itself dropped is seen at once.
  destination?.on('drop', (data: string) => {
    dropped += countLines(data);
  });
  // Lines of fixed writers (one a request) are gathered for up to 50 ms or 16 KB and go to stderr as
  // one string: sonic-boom measures the whole text it holds on every write, and starts a write
  // (about 20 us of this thread each) whenever none is in flight, which under load was one every
  // event-loop turn, a few lines each (12 us a request). Any other line first writes them, so lines
  // keep their order; `flush` writes them too.
  let gathered: string[] = [];
  let gatheredChars = 0;
  let gatherTimer: NodeJS.Timeout | undefined;
  const writeGathered = (): void => {
    clearTimeout(gatherTimer);
    gatherTimer = undefined;
    if (gathered.length === 0) return;
    const text = gathered.join('');
    gathered = [];
    gatheredChars = 0;
    destination?.write(text);
  };
  const out =
    destination === undefined
      ? { write: (line: string) => sink!(line) }
      : {
          write: (line: string): void => {
            writeGathered();
            destination.write(line);
          },
        };
  const writeFixed =
    destination === undefined
      ? out.write
      : (line: string): void => {
          if (gathered.push(line) === 1) gatherTimer = setTimeout(writeGathered, GATHERED_MAX_MS);
          gatheredChars += line.length;
          if (gatheredChars >= GATHERED_MAX_CHARS) writeGathered();
        };
  const p = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp,
      redact: { paths: [...REDACT_PATHS], censor: CENSOR },
      // Errors are already plain objects (redactKeys); pino's own err serializer would re-wrap them.
      serializers: { err: (value: unknown) => value },
    },
    out,
  );
  const scrub = options.scrub ?? keepText;
  const root =
    options.bindings === undefined ? p : p.child(redactKeys(options.bindings, 0, new WeakSet(), scrub) as LogFields);
  const intervalMs = options.repeatIntervalMs ?? 10_000;
  const limiter = intervalMs > 0 && level !== 'silent' ? createRepeatLimiter({ intervalMs }) : null;
  const writeSummaries = (due: { key: string; count: number }[]): void => {
    for (const { key, count } of due) {
      const [lvl, msg] = key.split('\u0000') as [Level, string];
      root[lvl]({ repeated: count }, `${msg} (repeated ${count} times)`);
    }
  };
  const reportDropped = (): void => {
    // The gathered lines first (any of them dropped are counted in `n`), so that only the report
    // itself can be dropped below.
    writeGathered();
    if (dropped === 0) return;
    const n = dropped;
    dropped = 0;
    root.warn({ dropped: n }, `${n} log lines dropped: stderr did not take them`);
    // Still no room: the report went the same way; the count waits for the next try.
    if (dropped > 0) dropped = n;
  };
  if (limiter !== null || destination !== undefined) {
    setInterval(
      () => {
        if (limiter !== null) writeSummaries(limiter.drain(now()));
        reportDropped();
      },
      intervalMs > 0 ? intervalMs : 10_000,
    ).unref();
  }
  const flush = (): void => {
    if (limiter !== null) writeSummaries(limiter.drain());
    writeGathered();
    try {
      destination?.flushSync();
    } catch {
      // Nothing written yet (the stream is still opening): nothing to lose.
    }
  };
  return wrap(root, { limiter, now, flush, scrub, writeFixed });
}

/** Lines in a text of whole lines. */
function countLines(text: string): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return Math.max(1, n);
}
