/** Child processes, free ports, health probes and /proc sampling for the benchmark driver. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Resolves once the process has exited, with a description of how. */
  readonly exited: Promise<string>;
  /** The last few KB the child wrote to stdout/stderr, for error reports. */
  output(): string;
  hasExited(): boolean;
  kill(signal: NodeJS.Signals): void;
}

/** Every child not yet seen to exit; killed by `killAllSync` whatever happens to the driver. */
const live = new Set<ChildProcess>();

/** The last `bytes` of a file, as text ('' when it cannot be read). */
function readTail(path: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface SpawnOptions {
  /**
   * The child's stdout and stderr go to this file (appended) instead of a pipe to this process:
   * a gateway that logs every request then costs the load generator nothing to read.
   */
  logFile?: string;
}

/** Spawns `node <args>` directly (no shell), so the pid we sample is the server itself. */
export function spawnNode(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: SpawnOptions = {},
): Child {
  const { logFile } = options;
  const fd = logFile === undefined ? undefined : openSync(logFile, 'a', 0o600);
  let proc: ChildProcess;
  try {
    proc = spawn(process.execPath, args, {
      env,
      stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  live.add(proc);
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-4096);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    const finish = (how: string): void => {
      done = true;
      live.delete(proc);
      resolve(how);
    };
    proc.once('exit', (code, signal) => finish(signal ?? `exit code ${String(code)}`));
    proc.once('error', (error) => finish(`spawn error: ${error.message}`));
  });
  if (proc.pid === undefined) throw new Error(`${name}: spawn failed`);
  return {
    name,
    pid: proc.pid,
    exited,
    output: () => (logFile === undefined ? tail : readTail(logFile, 4096)),
    hasExited: () => done,
    kill: (signal) => {
      if (!done) proc.kill(signal);
    },
  };
}

/** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. Resolves once it is gone. */
export async function stopChild(child: Child, graceMs = 5_000): Promise<string> {
  if (child.hasExited()) return child.exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Last-resort cleanup (exit, SIGINT, crash): synchronous, so it also works in an 'exit' handler. */
export function killAllSync(): void {
  for (const proc of live) proc.kill('SIGKILL');
  live.clear();
}

/** The kernel's ephemeral ports (`ip_local_port_range`): where it picks a port for an outgoing connection or a bind to 0. */
export function ephemeralPorts(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low!, high: high! };
  } catch {
    // Not Linux: the range Linux uses by default.
  }
  return { low: 32_768, high: 60_999 };
}

/** Whether 127.0.0.1:`port` can be listened on right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports this run handed out: each once, so two children never race for one. */
const handedOut = new Set<number>();
/** Where the next search starts: random per run, so two runs at once start apart. */
let cursor = -1;

/**
 * A port free on 127.0.0.1, from outside the kernel's ephemeral range: a port bound to 0 and
 * closed comes from that range, and between the close and the child's listen any outgoing
 * connection on the machine (a PostgreSQL client, another test) may take it, which ended fleet
 * runs with EADDRINUSE. Outside the range only another listener can. Falls back to a bind to 0
 * when the range leaves fewer than 1,000 ports out.
 */
export async function freePort(): Promise<number> {
  const { low, high } = ephemeralPorts();
  const below = { from: 10_000, to: low - 1 };
  const above = { from: high + 1, to: 65_535 };
  const range = below.to - below.from >= above.to - above.from ? below : above;
  const size = range.to - range.from + 1;
  if (size < 1_000) return bindZeroPort();
  if (cursor < 0) cursor = Math.floor(Math.random() * size);
  for (let tried = 0; tried < size; tried++) {
    const port = range.from + (cursor++ % size);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${range.from}-${range.to}`);
}

/** A port that was free a moment ago (bind to 0, read it, close): inside the ephemeral range. */
function bindZeroPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Status of `GET /healthz`, or 0 when nothing answers (yet). */
function probe(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Polls `/healthz` every few ms until it answers 200; throws if the child dies or time runs out. */
export async function waitHealthy(child: Child, port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.hasExited()) {
      throw new Error(`${child.name} exited (${await child.exited}) before it was healthy:\n${child.output()}`);
    }
    if ((await probe(port)) === 200) return;
    if (performance.now() > deadline) {
      throw new Error(`${child.name} not healthy within ${timeoutMs} ms:\n${child.output()}`);
    }
    await sleep(5);
  }
}

/** Resident set size of a process in kB (VmRSS), or undefined once it is gone. */
export function readRssKb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

/** utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
export function readCpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; fields are counted after its closing ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** USER_HZ; 100 on every Linux build Node supports (getconf CLK_TCK). */
export const TICKS_PER_SECOND = 100;

export interface ProcessSample {
  maxRssKb: number;
  /** CPU used by the process while sampled, in % of one core. */
  cpuPercent: number;
}

/** Samples a process's RSS every `intervalMs` until `stop()`; also measures its CPU over the span. */
export function sampleProcess(pid: number, intervalMs = 100): { stop(): ProcessSample } {
  const t0 = performance.now();
  const ticks0 = readCpuTicks(pid) ?? 0;
  let maxRssKb = readRssKb(pid) ?? 0;
  const timer = setInterval(() => {
    maxRssKb = Math.max(maxRssKb, readRssKb(pid) ?? 0);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      maxRssKb = Math.max(maxRssKb, readRssKb(pid) ?? 0);
      const seconds = (performance.now() - t0) / 1000;
      const used = ((readCpuTicks(pid) ?? ticks0) - ticks0) / TICKS_PER_SECOND;
      return { maxRssKb, cpuPercent: seconds > 0 ? (100 * used) / seconds : 0 };
    },
  };
}

/** Waits until the child's output matches `pattern` (e.g. a line announcing its URL). */
export async function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(child.output());
    if (m !== null) return m;
    if (child.hasExited()) throw new Error(`${child.name} exited (${await child.exited}):\n${child.output()}`);
    if (performance.now() > deadline)
      throw new Error(`${child.name}: no ${pattern} within ${timeoutMs} ms:\n${child.output()}`);
    await sleep(10);
  }
}
