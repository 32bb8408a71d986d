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

function redact(value: unknown, depth = 0): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, code: (value as { code?: unknown }).code, stack: value.stack };
  }
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}

/**
 * Creates a logger writing one JSON object per line.
 * @param options.level minimum level written. @default 'info'
 * @param options.write sink for each line. @default process.stderr
 */
export function createLog(
  options: { level?: LogLevel; write?: (line: string) => void; bindings?: LogFields } = {},
): Log {
  const min = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void => {
    if (RANK[level] < min) return;
    const line = { time: new Date().toISOString(), level, msg, ...(redact({ ...bindings, ...fields }) as LogFields) };
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
