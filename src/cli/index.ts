/** The `hookgate` command line. */
export { runCli } from './run-cli.js';
