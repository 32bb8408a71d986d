import { keepText, type Scrub } from './scrub-secrets.js';

/** Structured JSON-lines logger. Callers pass fields, never tokens or raw payloads. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Log {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Log;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Keys whose values are replaced before a line is written, wherever they appear. */
const SECRET_KEY = /token|password|secret|authorization|api[-_]?key/i;

/** An error as fields; its message, stack and causes scrubbed, since services echo keys in them. */
function serializeError(error: Error, scrub: Scrub, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: error.name,
    message: scrub(error.message),
    code: (error as { code?: unknown }).code,
    stack: error.stack === undefined ? undefined : scrub(error.stack),
  };
  if (error.cause instanceof Error && depth < 3) out['cause'] = serializeError(error.cause, scrub, depth + 1);
  return out;
}

function redact(value: unknown, scrub: Scrub, depth = 0): unknown {
  if (value instanceof Error) return serializeError(value, scrub, 0);
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, scrub, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, scrub, depth + 1);
  return out;
}

/**
 * Creates a logger writing one JSON object per line.
 * @param options.level minimum level written. @default 'info'
 * @param options.write sink for each line. @default process.stderr
 * @param options.scrub applied to every logged error's message and stack. @default keepText
 */
export function createLog(
  options: { level?: LogLevel; write?: (line: string) => void; bindings?: LogFields; scrub?: Scrub } = {},
): Log {
  const scrub = options.scrub ?? keepText;
  const min = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void => {
    if (RANK[level] < min) return;
    const line = { time: new Date().toISOString(), level, msg, ...(redact({ ...bindings, ...fields }, scrub) as LogFields) };
    write(JSON.stringify(line) + '\n');
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLog({ ...options, bindings: { ...bindings, ...fields } }),
  };
}
