/** The `hookgate` command line. */
export { runCli, USAGE } from './run-cli.js';
export type { CliDeps } from './cli-deps.js';
