// Hookgate dashboard: plain browser JavaScript over /admin/api, no build step, no dependencies.
// Every value from the gateway (payloads, replies, reasons) is untrusted: it is only ever set as
// text (textContent), never parsed as HTML.
import { $, badge, el, fields, link, row, table, time } from '/admin/dom.js';
import { dispatchView } from '/admin/dispatch.js';

const TOKEN_KEY = 'hookgate.adminToken';
const POLL_MS = 2000;
let pollTimer = null;

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

async function api(method, path) {
  const res = await fetch(`/admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) || ''}` },
  });
  const body = await res.json().catch(() => null);
  if (res.status === 401) {
    logout('The gateway token was refused.');
    throw new ApiError(res.status, body);
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function setStatus(text, isError) {
  const s = $('status');
  s.textContent = text;
  s.className = isError ? 'error' : 'muted';
}

function actionButton(label, onClick, secondary) {
  const b = el('button', { type: 'button', className: secondary ? 'secondary' : '' }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await onClick();
    } catch (error) {
      setStatus(`${label} failed: ${error.message}`, true);
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

function toolbar(...nodes) {
  $('toolbar').replaceChildren(...nodes);
}

function stateFilter(current, states, onChange) {
  const select = el(
    'select',
    { id: 'state-filter', ariaLabel: 'state' },
    el('option', { value: '' }, 'all states'),
    ...states.map((s) => el('option', { value: s, selected: s === current }, s)),
  );
  select.addEventListener('change', () => onChange(select.value));
  return el('label', { className: 'muted' }, 'State ', select);
}

// ---- views ---------------------------------------------------------------------------------

async function requestsView() {
  toolbar(
    el('span', { className: 'muted' }, `Recent hook requests, newest first; refreshed every ${POLL_MS / 1000} s.`),
  );
  const { requests } = await api('GET', '/requests?limit=100');
  const rows = requests.map((r) =>
    row(
      [
        time(r.at),
        r.method,
        r.hook ?? r.path,
        el('td', {}, badge(String(r.status), r.status)),
        r.code ?? '',
        el('td', { className: 'reason' }, r.reason ?? ''),
        r.client,
        `${r.durationMs.toFixed(1)} ms`,
        el('td', {}, ...r.runIds.map((id) => link(`#/runs/${id}`, 'run ')), ...r.eventIds.map(() => 'event ')),
      ],
      `#/requests/${r.id}`,
      r.id,
    ),
  );
  $('content').replaceChildren(
    requests.length === 0
      ? el('p', { className: 'muted' }, 'No hook requests yet.')
      : table(['time', 'method', 'hook', 'status', 'code', 'reason', 'client', 'duration', 'created'], rows),
  );
  return true;
}

async function requestView(id) {
  const { request: r } = await api('GET', `/requests/${encodeURIComponent(id)}`);
  const out = el('div');
  const replay = async (dryRun) => {
    const body = await api('POST', `/requests/${encodeURIComponent(id)}/replay${dryRun ? '?dryRun=1' : ''}`);
    out.replaceChildren(
      el('h3', {}, dryRun ? 'Dry run: the action it would build now (nothing stored)' : 'Replayed'),
      el('pre', {}, JSON.stringify(body.action, null, 2)),
    );
    if (!dryRun && body.action.kind === 'agent') out.append(link(`#/runs/${body.action.run.id}`, 'Open the new run'));
    setStatus(dryRun ? 'Dry run done.' : 'Replayed.');
  };
  toolbar(link('#/requests', '← requests'));
  $('content').replaceChildren(
    el(
      'div',
      { className: 'card' },
      el('h2', {}, `${r.method} ${r.path} `, badge(String(r.status), r.status)),
      fields([
        ['time', time(r.at)],
        ['hook', r.hook],
        ['client', r.client],
        ['code', r.code],
        ['reason', r.reason],
        ['duration', `${r.durationMs.toFixed(1)} ms`],
        ['events', r.eventIds.join(', ') || null],
        ['runs', r.runIds.length ? el('span', {}, ...r.runIds.map((x) => link(`#/runs/${x}`, x))) : null],
      ]),
      el('h3', {}, 'Payload'),
      r.payload === null
        ? el('p', { className: 'muted' }, 'Not recorded (gateway.recordPayloads is off).')
        : el('pre', {}, r.payload),
      el(
        'div',
        { className: 'actions' },
        actionButton('Replay', () => replay(false)),
        actionButton('Dry run', () => replay(true), true),
      ),
      out,
    ),
  );
  return false;
}

/** A run's state; a queued run a budget or a pause holds back shows as held. */
function runBadge(r) {
  return r.heldReason ? badge('held', 'held') : badge(r.state, r.state);
}

async function runsView(state) {
  toolbar(
    stateFilter(state, ['queued', 'running', 'succeeded', 'failed', 'timed_out'], (s) => {
      location.hash = s ? `#/runs?state=${s}` : '#/runs';
    }),
  );
  const { runs } = await api('GET', `/runs?limit=100${state ? `&state=${state}` : ''}`);
  $('content').replaceChildren(
    runs.length === 0
      ? el('p', { className: 'muted' }, 'No runs.')
      : table(
          ['created', 'name', 'state', 'agent', 'session', 'model', 'error / held'],
          runs.map((r) =>
            row(
              [
                time(r.createdAt),
                r.name,
                el('td', {}, runBadge(r)),
                r.agentId,
                r.sessionKey,
                r.modelUsed ?? r.model ?? 'default',
                el('td', { className: 'reason' }, r.error ?? r.heldReason ?? ''),
              ],
              `#/runs/${r.id}`,
              r.id,
            ),
          ),
        ),
  );
  return true;
}

function attemptsTable(d) {
  return d.attemptLog.length === 0
    ? el('p', { className: 'muted' }, 'No attempts yet.')
    : table(
        ['#', 'time', 'outcome', 'status', 'error'],
        d.attemptLog.map((a) =>
          el(
            'tr',
            {},
            el('td', {}, a.attempt),
            el('td', {}, time(a.at)),
            el('td', {}, a.outcome),
            el('td', {}, a.status ?? '—'),
            el('td', { className: 'reason' }, a.error ?? ''),
          ),
        ),
      );
}

function deliveryCard(d) {
  return el(
    'div',
    { className: 'card', id: 'delivery' },
    el('h2', {}, 'Delivery ', badge(d.state, d.state)),
    fields([
      ['id', link(`#/deliveries/${d.id}`, d.id)],
      ['channel', d.resolvedChannel ?? d.channel],
      ['to', d.resolvedTo ?? d.to],
      ['attempts', d.attempts],
      ['error', d.error],
      ['parts sent', d.partsSent],
      ['sent at', time(d.sentAt)],
    ]),
    el('h3', {}, 'Attempts'),
    attemptsTable(d),
    el(
      'div',
      { className: 'actions' },
      d.state === 'failed' || d.state === 'skipped'
        ? actionButton('Retry delivery', async () => {
            await api('POST', `/deliveries/${encodeURIComponent(d.id)}/retry`);
            setStatus('Delivery queued again.');
            await render();
          })
        : null,
    ),
  );
}

async function runView(id) {
  const { run: r, delivery } = await api('GET', `/runs/${encodeURIComponent(id)}`);
  toolbar(link('#/runs', '← runs'));
  $('content').replaceChildren(
    el(
      'div',
      { className: 'card', id: 'run' },
      el('h2', {}, `Run ${r.name} `, runBadge(r)),
      fields([
        ['id', r.id],
        ['agent', r.agentId],
        ['session', link(`#/sessions/${encodeURIComponent(r.sessionKey)}`, r.sessionKey)],
        ['model', r.modelUsed ?? r.model ?? 'agent default'],
        ['attempts', r.attempts],
        ['created', time(r.createdAt)],
        ['started', time(r.startedAt)],
        ['finished', time(r.finishedAt)],
        ['deliver', `${r.deliver} (${r.channel}${r.to ? ` → ${r.to}` : ''})`],
        ['tokens', r.tokens],
        ['held', r.heldReason],
        ['error', r.error ? el('span', { className: 'error' }, r.error) : null],
      ]),
      el('h3', {}, 'Message'),
      el('pre', {}, r.message),
      r.reply === null ? null : el('h3', {}, 'Reply'),
      r.reply === null ? null : el('pre', {}, r.reply),
      el(
        'div',
        { className: 'actions' },
        r.state === 'queued'
          ? actionButton('Cancel run', async () => {
              await api('POST', `/runs/${encodeURIComponent(r.id)}/cancel`);
              setStatus('Run cancelled.');
              await render();
            })
          : null,
      ),
    ),
    delivery === null ? el('p', { className: 'muted' }, 'No delivery for this run.') : deliveryCard(delivery),
  );
  return r.state === 'queued' || r.state === 'running' || (delivery !== null && delivery.state === 'pending');
}

async function deliveriesView(state) {
  toolbar(
    stateFilter(state, ['pending', 'sent', 'failed', 'skipped'], (s) => {
      location.hash = s ? `#/deliveries?state=${s}` : '#/deliveries';
    }),
  );
  const { deliveries } = await api('GET', `/deliveries?limit=100${state ? `&state=${state}` : ''}`);
  $('content').replaceChildren(
    deliveries.length === 0
      ? el('p', { className: 'muted' }, 'No deliveries.')
      : table(
          ['created', 'state', 'channel', 'to', 'attempts', 'error', 'run'],
          deliveries.map((d) =>
            row(
              [
                time(d.createdAt),
                el('td', {}, badge(d.state, d.state)),
                d.resolvedChannel ?? d.channel,
                d.resolvedTo ?? d.to ?? '—',
                d.attempts,
                el('td', { className: 'reason' }, d.error ?? ''),
                d.runId ? link(`#/runs/${d.runId}`, 'run') : 'heartbeat',
              ],
              `#/deliveries/${d.id}`,
              d.id,
            ),
          ),
        ),
  );
  return true;
}

async function deliveryView(id) {
  const { delivery } = await api('GET', `/deliveries/${encodeURIComponent(id)}`);
  toolbar(link('#/deliveries', '← deliveries'));
  $('content').replaceChildren(
    deliveryCard(delivery),
    el('div', { className: 'card' }, el('h3', {}, 'Text'), el('pre', {}, delivery.text)),
  );
  return delivery.state === 'pending';
}

async function sessionsView() {
  toolbar();
  const { sessions } = await api('GET', '/sessions?limit=100');
  $('content').replaceChildren(
    table(
      ['session', 'agent', 'last route', 'transcript', 'pending events', 'updated'],
      sessions.map((s) =>
        row(
          [
            s.key,
            s.agentId,
            s.lastChannel ? `${s.lastChannel} → ${s.lastTo}` : '—',
            s.transcriptEntries,
            s.pendingEvents,
            time(s.updatedAt),
          ],
          `#/sessions/${encodeURIComponent(s.key)}`,
          s.key,
        ),
      ),
    ),
  );
  return true;
}

async function sessionView(key) {
  const { session: s, transcript, pendingEvents } = await api('GET', `/sessions/${encodeURIComponent(key)}`);
  toolbar(link('#/sessions', '← sessions'));
  $('content').replaceChildren(
    el(
      'div',
      { className: 'card' },
      el('h2', {}, s.key),
      fields([
        ['agent', s.agentId],
        ['last route', s.lastChannel ? `${s.lastChannel} → ${s.lastTo}` : null],
        ['updated', time(s.updatedAt)],
      ]),
      el('h3', {}, 'Pending events'),
      ...(pendingEvents.length
        ? pendingEvents.map((e) => el('pre', {}, `${time(e.createdAt)} [${e.mode}] ${e.text}`))
        : [el('p', { className: 'muted' }, 'None.')]),
      el('h3', {}, 'Transcript (latest)'),
      ...(transcript.length
        ? transcript.map((t) => el('pre', {}, `${t.role}: ${t.content}`))
        : [el('p', { className: 'muted' }, 'Empty.')]),
    ),
  );
  return true;
}

async function eventsView() {
  toolbar();
  const { events } = await api('GET', '/events?limit=100');
  $('content').replaceChildren(
    table(
      ['created', 'session', 'hook', 'mode', 'consumed', 'text'],
      events.map((e) =>
        el(
          'tr',
          {},
          el('td', {}, time(e.createdAt)),
          el('td', {}, e.sessionKey),
          el('td', {}, e.source.hook),
          el('td', {}, e.mode),
          el('td', {}, time(e.consumedAt)),
          el('td', { className: 'reason' }, e.text),
        ),
      ),
    ),
  );
  return true;
}

async function subscriptionsView() {
  toolbar();
  const { subscriptions } = await api('GET', '/subscriptions');
  $('content').replaceChildren(
    subscriptions.length === 0
      ? el('p', { className: 'muted' }, 'No MCP Events subscriptions.')
      : table(
          ['event', 'arguments', 'callback', 'state', 'delivered', 'last delivery', 'last error', 'expires', ''],
          subscriptions.map((s) =>
            el(
              'tr',
              { id: s.id },
              el('td', {}, s.name),
              el('td', {}, Object.keys(s.arguments).length ? JSON.stringify(s.arguments) : '—'),
              el('td', { className: 'reason' }, s.url),
              el(
                'td',
                {},
                badge(s.endReason ? `${s.state} (${s.endReason})` : s.state, s.state === 'active' ? 'sent' : ''),
              ),
              el('td', {}, s.delivered),
              el('td', {}, time(s.lastDeliveryAt)),
              el('td', { className: 'reason' }, s.lastError ? `${s.lastError} (${s.attempts} tries)` : ''),
              el('td', {}, s.expiresAt === null ? 'never' : time(s.expiresAt)),
              el(
                'td',
                {},
                s.state === 'terminated'
                  ? null
                  : actionButton(
                      'Remove',
                      async () => {
                        await api('POST', `/subscriptions/${encodeURIComponent(s.id)}/remove`);
                        setStatus('Subscription removed; its callback is told.');
                        await render();
                      },
                      true,
                    ),
              ),
            ),
          ),
        ),
  );
  return true;
}

// ---- routing -------------------------------------------------------------------------------

function route() {
  const [path, query] = (location.hash.slice(1) || '/requests').split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [tab, id] = parts;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.tab === tab);
  switch (tab) {
    case 'requests':
      return id ? () => requestView(id) : requestsView;
    case 'runs':
      return id ? () => runView(id) : () => runsView(params.get('state') || '');
    case 'deliveries':
      return id ? () => deliveryView(id) : () => deliveriesView(params.get('state') || '');
    case 'sessions':
      return id ? () => sessionView(id) : sessionsView;
    case 'events':
      return eventsView;
    case 'subscriptions':
      return subscriptionsView;
    case 'dispatch':
      return () => dispatchView($('content'), { api, actionButton, setStatus, toolbar, rerender: render });
    default:
      return requestsView;
  }
}

async function render() {
  clearTimeout(pollTimer);
  if (!sessionStorage.getItem(TOKEN_KEY)) return;
  const view = route();
  try {
    const live = await view();
    setStatus(`Updated ${new Date().toLocaleTimeString()}`);
    // List views and unfinished work refresh themselves; a detail being read stays put.
    if (live) pollTimer = setTimeout(render, POLL_MS);
  } catch (error) {
    if (error.status === 401) return;
    setStatus(`Could not load: ${error.message}`, true);
    pollTimer = setTimeout(render, POLL_MS);
  }
}

function showLoggedIn(loggedIn) {
  $('login').hidden = loggedIn;
  $('view').hidden = !loggedIn;
  $('nav').hidden = !loggedIn;
  $('logout').hidden = !loggedIn;
}

function logout(message) {
  clearTimeout(pollTimer);
  sessionStorage.removeItem(TOKEN_KEY);
  showLoggedIn(false);
  $('login-error').textContent = message || '';
}

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
    $('token').value = '';
    try {
      await api('GET', '/requests?limit=1');
    } catch (error) {
      if (error.status !== 401) $('login-error').textContent = error.message;
      return;
    }
    $('login-error').textContent = '';
    showLoggedIn(true);
    await render();
  });
  $('logout').addEventListener('click', () => logout());
  window.addEventListener('hashchange', render);
  showLoggedIn(Boolean(sessionStorage.getItem(TOKEN_KEY)));
  void render();
});
