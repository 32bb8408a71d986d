/** The global usage text and each command's own. */
export const USAGE = `Usage: hookgate <command> [options]

Commands:
  serve              start the gateway (first run writes a config with fresh tokens)
  init               write a starter config with fresh tokens
  check              validate the config and print every issue
  send HOOK          post a payload to the running gateway (wake, agent or a mapped name; --sign)
  mappings test HOOK show the action a mapping builds from a payload (nothing is stored)
  events             list system events, newest first
  runs               list agent runs, newest first (--state STATE: only those), with a count per state
  status             queue depths, oldest pending ages, runs by state, store size
  sessions           list sessions, most recently active first
  session KEY        show a session's transcript and pending events
  deliveries         list deliveries, newest first (--failed: only failed ones)
  retry ID           requeue a failed or skipped delivery
  subscriptions      list MCP Events webhook subscriptions (remove ID: end one)
  prune              delete finished work past store.retention (--dry-run: only count it)
  pause              hold dispatch (--all, --agent ID or --mapping ID); requests are still stored
  resume             lift a hold (same selectors; --replica: end this replica's drain)
  drain              hold all dispatch and wait until nothing is in flight (--replica: only this one)
  catch-up           read what a provider sent while the gateway was away, and handle it (--mapping, --since)
  token              print a fresh random token

Options:
  -c, --config FILE  config file (default: $HOOKGATE_CONFIG, else $HOOKGATE_HOME/hookgate.json)
  -h, --help         show this help, or a command's own with "hookgate <command> --help"
  -V, --version      print the version
`;

const CONFIG = '  -c, --config FILE  config file (default: $HOOKGATE_CONFIG, else $HOOKGATE_HOME/hookgate.json)\n';
const LIST = `${CONFIG}  --json             print JSON\n  -n, --limit N      how many to show (default 20)\n`;

/** Each command's usage, as `hookgate <command> --help` prints it. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `Usage: hookgate serve [--config FILE] [--port N] [--bind ADDRESS]

Starts the gateway and runs until SIGINT or SIGTERM. Without --config or $HOOKGATE_CONFIG and with
no $HOOKGATE_HOME/hookgate.json, writes a starter config with fresh tokens (printed once). A config
named explicitly must exist. SIGHUP, or saving the config file, reloads hooks, mappings, tokens
and channels; a reload that fails the checks of "hookgate check" is refused and the old config stays.

Options:
${CONFIG}  --port N           listen on this port (overrides $HOOKGATE_PORT and gateway.port)
  --bind ADDRESS     listen on this address (overrides gateway.bind)
`,
  init: `Usage: hookgate init [--config FILE]

Writes a starter config with fresh hook and gateway tokens and prints them. Refuses to overwrite.

Options:
${CONFIG}`,
  check: `Usage: hookgate check [--config FILE]

Validates the config the way "serve" does, and also loads every transform and resolves
gateway.bind; prints every issue with its path. Exit 0: serve would start; 1: it would refuse.

Options:
${CONFIG}`,
  send: `Usage: hookgate send HOOK (--data JSON | --file PAYLOAD.json) [--sign] [--config FILE]

Posts the payload to HOOK (wake, agent or a mapped name) on the running gateway of the config,
with its hook token, and prints the status and the response body. Exit 0 for a 2xx answer, 1 otherwise.

Options:
${CONFIG}  --data JSON        the payload
  --file FILE        read the payload from a file
  --sign             sign it as the sender of the mapping serving HOOK would (its verify scheme and
                     first secret) and send no hook token
`,
  mappings: `Usage: hookgate mappings test HOOK --file PAYLOAD.json [--config FILE]

Shows the action a call to HOOK with this payload would build (match, templates, transform,
policy: the gateway's own code path) without storing anything or calling a model. Exit 0 when an
action (or a skip) is built; 1 when the call would be refused, with the status and code it would get.

Options:
${CONFIG}  --file FILE        the payload (use --data JSON to give it inline)
  --data JSON        the payload
`,
  events: `Usage: hookgate events [--json] [-n N] [--config FILE]

Lists system events, newest first.

Options:
${LIST}`,
  runs: `Usage: hookgate runs [--state STATE] [--json] [-n N] [--config FILE]

Lists agent runs, newest first: state, timings, agent, session, model, reply or error; then one
line counting every run in the store by state.

Options:
${LIST}  --state STATE      only runs in this state: queued, running, succeeded, failed, timed_out
`,
  status: `Usage: hookgate status [--json] [--config FILE]

Reads the store beside a running gateway (or without one) and prints its queue depths (runs queued
and running, events and deliveries pending) with the age of the oldest waiting item, every run
counted by state, and the store's size (SQLite: database and WAL files; PostgreSQL: each table
with its indexes).

Options:
${CONFIG}  --json             print JSON
`,
  sessions: `Usage: hookgate sessions [--json] [-n N] [--config FILE]

Lists sessions, most recently active first.

Options:
${LIST}`,
  session: `Usage: hookgate session KEY [--json] [-n N] [--config FILE]

Shows a session's transcript and its pending events.

Options:
${LIST}`,
  deliveries: `Usage: hookgate deliveries [--failed] [--json] [-n N] [--config FILE]

Lists deliveries, newest first.

Options:
${LIST}  --failed           only failed deliveries
`,
  retry: `Usage: hookgate retry ID [--config FILE]

Requeues a failed or skipped delivery.

Options:
${CONFIG}`,
  subscriptions: `Usage: hookgate subscriptions [--json] [--config FILE]
       hookgate subscriptions remove ID [--config FILE]

Lists the MCP Events webhook subscriptions, oldest first: their event, arguments, callback URL,
state, position, deliveries and last error (never their secrets). "remove ID" ends one: the
running gateway sends its callback a signed "terminated" notice (reason "removed") and deletes it.

Options:
${CONFIG}  --json             print JSON
`,
  prune: `Usage: hookgate prune [--dry-run] [--config FILE]

Deletes what store.retention lets go (consumed events, finished runs, ended deliveries,
transcript entries, request records, published occurrences, expired idempotency keys, idle sessions), in small
batches, beside a running gateway or without one. The gateway also does this in the
background every minute.

Options:
${CONFIG}  --dry-run          count what would be deleted, delete nothing
`,
  pause: `Usage: hookgate pause (--all | --agent ID | --mapping ID) [--note TEXT] [--config FILE]

Holds dispatch, in the store: every replica's next claim honours the hold, and it lasts across
restarts until "hookgate resume". Requests are still accepted and stored; what is claimed already
finishes. --all: no run, heartbeat turn or delivery starts. --agent: the agent's runs, heartbeat
turns and deliveries wait. --mapping: the mapping's runs and the deliveries of their replies wait
(its wakes still reach the agent's main session). Queued runs say why they wait (heldReason).

Options:
${CONFIG}  --all              hold everything
  --agent ID         hold one agent
  --mapping ID       hold one mapping (its id, as in the config)
  --note TEXT        why, shown beside the hold and in held runs' heldReason
`,
  resume: `Usage: hookgate resume (--all | --agent ID | --mapping ID | --replica) [--config FILE]

Lifts the hold a "hookgate pause" (or, with --all, a "hookgate drain") set; the replicas look for
the work it held at once. Holds on other selectors stay. --replica ends the drain of the gateway
this config describes (through its admin API).

Options:
${CONFIG}  --all              lift the hold on everything (a pause or a drain)
  --agent ID         lift an agent's hold
  --mapping ID       lift a mapping's hold
  --replica          end this replica's own drain
`,
  drain: `Usage: hookgate drain [--timeout DURATION] [--replica] [--note TEXT] [--config FILE]

For a deploy: holds all dispatch in the store (no replica claims new runs, heartbeat turns or
deliveries; requests are still accepted and stored), then waits until the work in flight in every
replica has finished, printing what is left. Exit 0 once nothing is in flight, 1 when the timeout
passes first. The hold stays until "hookgate resume --all", so replicas started meanwhile wait too.
With --replica only the gateway this config describes drains (through its admin API), until
"hookgate resume --replica" or its restart.

Options:
${CONFIG}  --timeout DURATION how long to wait (default 10m)
  --replica          drain only the gateway of this config
  --note TEXT        why, shown beside the hold
`,
  'catch-up': `Usage: hookgate catch-up [--mapping ID] [--since TIME] [--json] [--config FILE]

Runs a catch-up pass now for each mapping with catchUp (or the one named), in this process, beside a
running gateway or without one: the provider's record (GitHub's webhook deliveries, Stripe's events)
is read from where the last pass stopped, and every event that never reached the gateway goes
through the mapping as a delivered request would (its idempotency key the provider's id, so one
already here is passed over), recorded in the request log from the client catch-up:<provider>.
The gateway runs a pass at start and every catchUp.every. Exit 0 when every pass ran, 1 otherwise.

Options:
${CONFIG}  --mapping ID       only this mapping
  --since TIME       read from this time (2h ago, or an ISO time) instead of where the last pass
                     stopped; never before hooks.idempotencyWindowSeconds ago
  --json             print each pass's report as JSON
`,
  token: `Usage: hookgate token

Prints a fresh random token (for hooks.token, gateway.auth.token or mcp.token).
`,
};
