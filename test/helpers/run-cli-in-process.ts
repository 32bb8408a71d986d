import { runCli } from '../../src/cli/index.js';
import type { Env } from '../../src/config/index.js';
import { openStore, startGateway } from '../../src/main.js';

/** What a command printed and the code it exited with. */
export interface InProcessCliResult {
  code: number | undefined;
  stdout: string;
  stderr: string;
}

/** Runs a `hookgate` command in this process against a config file, with `env` as its environment. */
export async function runCliInProcess(configPath: string, args: string[], env: Env = {}): Promise<InProcessCliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...args, '--config', configPath], {
    env,
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    startGateway,
    openStore,
  });
  return { code, stdout, stderr };
}
