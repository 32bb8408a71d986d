/** Settings from the environment, the shared temp dir with its cleanup, the watchdog and output. */
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllSync } from './proc.js';

export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

export function envChoice<T extends string>(name: string, choices: readonly T[], fallback: T): T {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const found = choices.find((c) => c === raw);
  if (found === undefined)
    throw new Error(`${name} must be one of ${choices.map((c) => `"${c}"`).join(', ')}, got "${raw}"`);
  return found;
}

/** A comma-separated list of integers >= min, e.g. `4,16`. */
export function envIntList(name: string, fallback: readonly number[], min: number): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < min)) {
    throw new Error(`${name} must be a comma-separated list of integers >= ${min}, got "${raw}"`);
  }
  return values;
}

export const log = (line: string): void => void process.stdout.write(`${line}\n`);

/**
 * Creates the one temp dir everything the run writes lives under, and removes it (after killing
 * every child) on every way out: normal exit, SIGINT/SIGTERM, a crash.
 */
export function createWorkdir(): string {
  const root = mkdtempSync(join(process.env['BENCH_TMPDIR'] ?? tmpdir(), 'hookgate-bench-'));
  let cleaned = false;
  const cleanupSync = (): void => {
    if (cleaned) return;
    cleaned = true;
    killAllSync();
    rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', cleanupSync);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping children and removing ${root}\n`);
      cleanupSync();
      process.exit(128 + constants.signals[signal]);
    });
  }
  return root;
}

/** No run may outlive its budget: a hung child or loader would otherwise hang CI. */
export function startWatchdog(budgetS: number): void {
  setTimeout(() => {
    process.stderr.write(`bench: exceeded the ${Math.round(budgetS)} s budget, aborting\n`);
    process.exit(1);
  }, budgetS * 1000).unref();
}
