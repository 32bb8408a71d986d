/** The `hookgate` command line. */
export { runCli, USAGE } from './run-cli.js';
export type { CliDeps, RunningGateway } from './cli-deps.js';
