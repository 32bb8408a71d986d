import { parseArgs } from 'node:util';
import { generateToken } from '../common/ids.js';
import { resolveConfigPath, writeDefaultConfig } from '../config/index.js';
import { checkCommand } from './check-command.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { listCommand } from './list-command.js';
import { deliveriesCommand, retryCommand } from './deliveries-command.js';
import { serveCommand } from './serve-command.js';
import { sessionCommand, sessionsCommand } from './sessions-command.js';

export const USAGE = `Usage: hookgate <command> [options]

Commands:
  serve              start the gateway (first run writes a config with fresh tokens)
  init               write a starter config with fresh tokens
  check              validate the config and print every issue
  events             list system events, newest first
  runs               list agent runs, newest first (state, timings, model, reply or error)
  sessions           list sessions, most recently active first
  session KEY        show a session's transcript and pending events
  deliveries         list deliveries, newest first (--failed: only failed ones)
  retry ID           requeue a failed or skipped delivery
  token              print a fresh random token

Options:
  -c, --config FILE  config file (default: $HOOKGATE_CONFIG, else $HOOKGATE_HOME/hookgate.json)
  --json             (events, runs, sessions, session, deliveries) print JSON
  --failed           (deliveries) only failed deliveries
  -n, --limit N      (events, runs, sessions, session) how many to show (default 20)
  -h, --help         show this help
`;

/** Runs one CLI command; resolves with the exit code, or `undefined` while `serve` keeps running. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number | undefined> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        json: { type: 'boolean', default: false },
        limit: { type: 'string', short: 'n' },
        help: { type: 'boolean', short: 'h', default: false },
        failed: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    deps.stderr(`hookgate: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    deps.stdout(USAGE);
    return command === undefined && !values.help ? EXIT_USAGE : EXIT_OK;
  }
  const wanted = command === 'session' || command === 'retry' ? 1 : 0;
  if (rest.length !== wanted) {
    deps.stderr(rest.length > wanted ? `hookgate: unexpected argument "${rest[wanted]}"\n` : `hookgate: ${command} needs ${command === 'retry' ? 'a delivery id' : 'a session key'}\n`);
    return EXIT_USAGE;
  }
  const configPath = resolveConfigPath(values.config, deps.env);
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) {
    deps.stderr('hookgate: --limit must be a positive integer\n');
    return EXIT_USAGE;
  }
  switch (command) {
    case 'serve':
      return serveCommand(configPath, deps);
    case 'init': {
      try {
        const tokens = writeDefaultConfig(configPath);
        deps.stdout(`Wrote ${configPath}\n  hooks token:   ${tokens.hooksToken}\n  gateway token: ${tokens.gatewayToken}\n`);
        return EXIT_OK;
      } catch (error) {
        deps.stderr(`hookgate: cannot write ${configPath}: ${(error as Error).message}\n`);
        return EXIT_FAILURE;
      }
    }
    case 'check':
      return checkCommand(configPath, deps);
    case 'events':
    case 'runs':
      return listCommand(command, configPath, { json: values.json, limit }, deps);
    case 'sessions':
      return sessionsCommand(configPath, { json: values.json, limit }, deps);
    case 'session':
      return sessionCommand(configPath, rest[0]!, { json: values.json, limit }, deps);
    case 'deliveries':
      return deliveriesCommand(configPath, { json: values.json, limit, failed: values.failed }, deps);
    case 'retry':
      return retryCommand(configPath, rest[0]!, deps);
    case 'token':
      deps.stdout(`${generateToken()}\n`);
      return EXIT_OK;
    default:
      deps.stderr(`hookgate: unknown command "${command}"\n\n${USAGE}`);
      return EXIT_USAGE;
  }
}
