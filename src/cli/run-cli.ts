import { parseArgs } from 'node:util';
import { generateToken } from '../common/ids.js';
import { resolveConfigPath, writeDefaultConfig } from '../config/index.js';
import { checkCommand } from './check-command.js';
import { COMMAND_HELP, USAGE } from './command-help.js';
import { mappingsTestCommand } from './mappings-command.js';
import { readVersion } from './read-version.js';
import { sendCommand } from './send-command.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { listCommand } from './list-command.js';
import { deliveriesCommand, retryCommand } from './deliveries-command.js';
import { pruneCommand } from './prune-command.js';
import { serveCommand } from './serve-command.js';
import { statusCommand } from './status-command.js';
import { RUN_STATES } from '../store/index.js';
import { sessionCommand, sessionsCommand } from './sessions-command.js';
import { removeSubscriptionCommand, subscriptionsCommand } from './subscriptions-command.js';
import { drainCommand, pauseCommand, resumeCommand } from './dispatch-command.js';
import { catchUpCommand } from './catch-up-command.js';

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean', default: false },
  limit: { type: 'string', short: 'n' },
  help: { type: 'boolean', short: 'h', default: false },
  failed: { type: 'boolean', default: false },
  state: { type: 'string' },
  version: { type: 'boolean', short: 'V', default: false },
  data: { type: 'string' },
  file: { type: 'string' },
  port: { type: 'string' },
  bind: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  sign: { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  agent: { type: 'string' },
  mapping: { type: 'string' },
  note: { type: 'string' },
  timeout: { type: 'string' },
  replica: { type: 'boolean', default: false },
  since: { type: 'string' },
} as const;

const parseCliArgs = (argv: readonly string[]) =>
  parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });

/** Positional arguments each command takes after its name. */
const POSITIONALS: Readonly<Record<string, { count: number; missing: string }>> = {
  session: { count: 1, missing: 'a session key' },
  retry: { count: 1, missing: 'a delivery id' },
  send: { count: 1, missing: 'a hook name (wake, agent or a mapped name)' },
  mappings: { count: 2, missing: '"test" and a hook name' },
};

/** Runs one CLI command; resolves with the exit code, or `undefined` while `serve` keeps running. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number | undefined> {
  let parsed: ReturnType<typeof parseCliArgs>;
  try {
    parsed = parseCliArgs(argv);
  } catch (error) {
    const named = argv.find((a) => Object.hasOwn(COMMAND_HELP, a));
    deps.stderr(
      `hookgate: ${(error as Error).message.split('\n')[0]}\n\n${named === undefined ? USAGE : COMMAND_HELP[named]}`,
    );
    return EXIT_USAGE;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) {
    deps.stdout(`hookgate ${readVersion()}\n`);
    return EXIT_OK;
  }
  if (command === 'help' && rest[0] !== undefined && Object.hasOwn(COMMAND_HELP, rest[0])) {
    deps.stdout(COMMAND_HELP[rest[0]]!);
    return EXIT_OK;
  }
  if (values.help || command === undefined || command === 'help') {
    deps.stdout(command !== undefined && Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command]! : USAGE);
    return command === undefined && !values.help ? EXIT_USAGE : EXIT_OK;
  }
  if (!Object.hasOwn(COMMAND_HELP, command)) {
    deps.stderr(`hookgate: unknown command "${command}"\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  // `subscriptions` lists; `subscriptions remove ID` removes one.
  const wanted = command === 'subscriptions' && rest.length > 0 ? 2 : (POSITIONALS[command]?.count ?? 0);
  if (command === 'subscriptions' && rest.length > 0 && rest[0] !== 'remove') {
    deps.stderr(`hookgate: unknown subscriptions command "${rest[0]}"\n\n${COMMAND_HELP['subscriptions']}`);
    return EXIT_USAGE;
  }
  if (rest.length !== wanted) {
    deps.stderr(
      rest.length > wanted
        ? `hookgate: unexpected argument "${rest[wanted]}"\n\n${COMMAND_HELP[command]}`
        : `hookgate: ${command} needs ${POSITIONALS[command]?.missing ?? 'remove and a subscription id'}\n\n${COMMAND_HELP[command]}`,
    );
    return EXIT_USAGE;
  }
  if (command === 'mappings' && rest[0] !== 'test') {
    deps.stderr(`hookgate: unknown mappings command "${rest[0]}"\n\n${COMMAND_HELP['mappings']}`);
    return EXIT_USAGE;
  }
  const configPath = resolveConfigPath(values.config, deps.env);
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) {
    deps.stderr('hookgate: --limit must be a positive integer\n');
    return EXIT_USAGE;
  }
  const state = RUN_STATES.find((s) => s === values.state);
  if (values.state !== undefined && (command !== 'runs' || state === undefined)) {
    deps.stderr(
      command !== 'runs'
        ? `hookgate: --state applies to "runs" only\n\n${COMMAND_HELP[command]}`
        : `hookgate: --state must be one of ${RUN_STATES.join(', ')}\n\n${COMMAND_HELP['runs']}`,
    );
    return EXIT_USAGE;
  }
  switch (command) {
    case 'serve':
      return serveCommand(
        configPath,
        {
          explicit: values.config !== undefined || deps.env['HOOKGATE_CONFIG'] !== undefined,
          port: values.port,
          bind: values.bind,
        },
        deps,
      );
    case 'send':
      return sendCommand(configPath, rest[0]!, { data: values.data, file: values.file, sign: values.sign }, deps);
    case 'mappings':
      return mappingsTestCommand(configPath, rest[1]!, { data: values.data, file: values.file }, deps);
    case 'init': {
      try {
        const tokens = writeDefaultConfig(configPath);
        deps.stdout(
          `Wrote ${configPath}\n  hooks token:   ${tokens.hooksToken}\n  gateway token: ${tokens.gatewayToken}\n`,
        );
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
      return listCommand(
        command,
        configPath,
        { json: values.json, limit, ...(state === undefined ? {} : { state }) },
        deps,
      );
    case 'status':
      return statusCommand(configPath, { json: values.json }, deps);
    case 'sessions':
      return sessionsCommand(configPath, { json: values.json, limit }, deps);
    case 'session':
      return sessionCommand(configPath, rest[0]!, { json: values.json, limit }, deps);
    case 'deliveries':
      return deliveriesCommand(configPath, { json: values.json, limit, failed: values.failed }, deps);
    case 'retry':
      return retryCommand(configPath, rest[0]!, deps);
    case 'subscriptions':
      return rest[0] === 'remove'
        ? removeSubscriptionCommand(configPath, rest[1]!, deps)
        : subscriptionsCommand(configPath, { json: values.json }, deps);
    case 'prune':
      return pruneCommand(configPath, { dryRun: values['dry-run'] }, deps);
    case 'pause':
      return pauseCommand(
        configPath,
        { all: values.all, agent: values.agent, mapping: values.mapping, note: values.note },
        deps,
      );
    case 'resume':
      return resumeCommand(
        configPath,
        { all: values.all, agent: values.agent, mapping: values.mapping, replica: values.replica },
        deps,
      );
    case 'catch-up':
      return catchUpCommand(configPath, { mapping: values.mapping, since: values.since, json: values.json }, deps);
    case 'drain':
      return drainCommand(configPath, { timeout: values.timeout, replica: values.replica, note: values.note }, deps);
    case 'token':
      deps.stdout(`${generateToken()}\n`);
      return EXIT_OK;
    default:
      deps.stderr(`hookgate: unknown command "${command}"\n\n${USAGE}`);
      return EXIT_USAGE;
  }
}
