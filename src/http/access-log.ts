import type { FixedLine, Log } from '../common/log.js';
import type { LoggingConfig } from '../config/index.js';

/**
 * What the access line of one request says. Never the token, the query or the body: the path is
 * logged without its query string, and nothing of the payload is kept here.
 */
export interface AccessEntry {
  method: string;
  path: string;
  /** The `<name>` after `hooks.path`, once the request got that far. */
  hook: string | null;
  client: string;
  /** The error code of a refused request; `null` when accepted. */
  code: string | null;
  eventId?: string;
  runId?: string;
}

/** The longest path or hook name an access line and a request record keep (a request line may be 16 KB). */
const MAX_LOGGED_PATH = 1024;

/** `text` cut to `MAX_LOGGED_PATH` characters, marked with `…` where it was cut. */
export const clipLogged = (text: string): string =>
  text.length <= MAX_LOGGED_PATH ? text : `${text.slice(0, MAX_LOGGED_PATH)}…`;

/** The access log: one line per hook request whose response is done. */
export interface AccessLog {
  /** The request is done: `status` is what was answered, `null` when the client left first. */
  write(entry: AccessEntry, status: number | null, ms: number): void;
  /** Writes the count of lines held back while load was shed, if any (shutdown). */
  flush(): void;
}

/** While load is shed (503), at most this many shed requests' lines are written per interval… */
export const SHED_LINES_PER_INTERVAL = 10;
/** …and the rest counted, one line at the interval's end saying how many. */
export const SHED_INTERVAL_MS = 10_000;

interface AccessLogOptions {
  /** Read per request, so a reload applies. @default all lines */
  settings?: () => LoggingConfig;
  /** @default Date.now */
  now?: () => number;
  /** Calls `fn` once `ms` have passed (the interval's end); returns its cancel. @default an unref'd timer */
  schedule?: (fn: () => void, ms: number) => () => void;
}

const scheduleTimer = (fn: () => void, ms: number): (() => void) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

const ALL: LoggingConfig = { access: 'all', accessSample: 1 };

/** A value as JSON text; a string (paths and hook names are the caller's) escaped where it must be. */
const text = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));

/** `text`, remembering the last value: a field of a busy gateway's lines mostly repeats the one before. */
function lastText(): (s: string | null) => string {
  let last: string | null = null;
  let lastJson = 'null';
  return (s) => {
    if (s !== last) {
      last = s;
      lastJson = text(s);
    }
    return lastJson;
  };
}

/**
 * The `info` line of each hook request, written without the logger's redaction passes: its fields
 * are these, none holds a payload, a header or a token (the path has no query), and strings are
 * JSON-escaped. Lines of requests shed with a 503 (the store cannot write, the gateway is not
 * ready) are throttled: a full disk answered 43,561 requests in 18 s, and a line each would fill
 * what the disk had left; what is held back is counted in one line per interval.
 */
export function createAccessLog(log: Log, options: AccessLogOptions = {}): AccessLog {
  const line: FixedLine | null = log.fixedLine('info', 'hook request');
  const settings = options.settings ?? (() => ALL);
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? scheduleTimer;
  /** Accepted requests' lines owed under sampling: one is written each time this reaches 1 (the first at once). */
  let credit: number | null = null;
  let shedWindowEnd = Number.NEGATIVE_INFINITY;
  let shedWritten = 0;
  let heldBack = 0;
  let heldByCode: Record<string, number> = {};
  let cancelTimer: (() => void) | undefined;
  const method = lastText();
  const path = lastText();
  const hook = lastText();
  const client = lastText();

  const reportHeldBack = (): void => {
    cancelTimer?.();
    cancelTimer = undefined;
    if (heldBack === 0) return;
    log.info('hook requests shed: access lines held back', {
      heldBack,
      codes: heldByCode,
      intervalMs: SHED_INTERVAL_MS,
    });
    heldBack = 0;
    heldByCode = {};
  };

  /** Whether a shed request's line may be written now; counts it when not. */
  const takeShedLine = (code: string): boolean => {
    const at = now();
    if (at >= shedWindowEnd) {
      reportHeldBack();
      shedWindowEnd = at + SHED_INTERVAL_MS;
      shedWritten = 0;
    }
    if (shedWritten < SHED_LINES_PER_INTERVAL) {
      shedWritten++;
      return true;
    }
    heldBack++;
    heldByCode[code] = (heldByCode[code] ?? 0) + 1;
    cancelTimer ??= schedule(reportHeldBack, Math.max(0, shedWindowEnd - at));
    return false;
  };

  return {
    write(entry, status, ms) {
      if (line === null) return;
      const { access, accessSample } = settings();
      if (access === 'off') return;
      const refused = status === null || status >= 400;
      if (!refused) {
        if (access === 'refusals') return;
        if (accessSample < 1) {
          credit = (credit ?? 1 - accessSample) + accessSample;
          if (credit < 1) return;
          credit -= 1;
        }
      }
      const code = status !== null || entry.code !== null ? entry.code : 'client_gone';
      if (status === 503 && !takeShedLine(code ?? 'unknown')) return;
      line(
        `"method":${method(entry.method)},"path":${path(entry.path)},"hook":${hook(entry.hook)},"client":${client(entry.client)},` +
          `"status":${status === null ? 'null' : status},"code":${text(code)},"ms":${Number.isFinite(ms) ? Math.max(ms, 0) : 0}` +
          `${entry.eventId === undefined ? '' : `,"eventId":${text(entry.eventId)}`}` +
          `${entry.runId === undefined ? '' : `,"runId":${text(entry.runId)}`}`,
      );
    },
    flush: reportHeldBack,
  };
}
