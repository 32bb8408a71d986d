import type { Log } from '../common/log.js';
import type { Env, LoadedConfig } from '../config/index.js';
import type { Store, StoreMode } from '../store/index.js';

/** What the CLI needs from the composition root; injected so commands can be tested in-process. */
export interface CliDeps {
  env: Env;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  startGateway: (loaded: LoadedConfig, options: { log: Log }) => Promise<RunningGateway>;
  openStore: (loaded: LoadedConfig, options: { mode: StoreMode }) => Promise<Store>;
  /** The time ages are measured against. @default Date.now */
  now?: () => number;
  /** Waits between polls (`drain`). @default a timer */
  sleep?: (ms: number) => Promise<void>;
}

/** What `serve` holds while the gateway runs. */
export interface RunningGateway {
  port: number;
  /** Applies a checked config; returns the changed keys that need a restart. */
  reload(next: LoadedConfig): string[];
  close(): Promise<void>;
}

/** Exit codes: 0 ok, 1 a problem with config or state, 2 a usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
