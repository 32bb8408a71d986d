// The dispatch view: what is held (pause, drain) and what is in flight, with the controls to change
// it. Every value (a mapping's id, an operator's note) is set as text only, as in the other views.
import { el, fields, table, time } from '/admin/dom.js';

const SCOPES = ['all', 'agent', 'mapping'];

const what = (h) => (h.scope === 'all' ? 'all dispatch' : `${h.scope} "${h.key}"`);
const inFlight = (f) => `${f.runs} runs, ${f.deliveries} deliveries, ${f.heartbeats} heartbeat turns`;

/** `?all=1`, `?agent=main`, `?mapping=github`: the selector of a hold, as the API takes it. */
const selector = (scope, key) => (scope === 'all' ? { all: '1' } : { [scope]: key });

/**
 * The controls, built once per visit: the view refreshes every few seconds, and rebuilding them
 * would drop what the operator is choosing or typing.
 */
function controls(state, ui, call) {
  const scope = el(
    'select',
    { id: 'hold-scope', ariaLabel: 'what to pause' },
    ...SCOPES.map((s) => el('option', { value: s }, s === 'all' ? 'everything' : s)),
  );
  const key = el('select', { id: 'hold-key', ariaLabel: 'which one', hidden: true });
  scope.addEventListener('change', () => {
    const ids = scope.value === 'agent' ? state.known.agents : scope.value === 'mapping' ? state.known.mappings : [];
    key.replaceChildren(...ids.map((id) => el('option', { value: id }, id)));
    key.hidden = scope.value === 'all';
  });
  const note = el('input', { id: 'hold-note', type: 'text', maxLength: 500, placeholder: 'why (optional)' });
  const withNote = (params) => (note.value.trim() === '' ? params : { ...params, note: note.value.trim() });
  const replicaButton = el('span', { id: 'replica-control' });
  return {
    replicaButton,
    node: el(
      'div',
      { className: 'card', id: 'dispatch-controls' },
      el('h3', {}, 'Pause'),
      el(
        'p',
        { className: 'muted' },
        'An agent: its runs, heartbeat turns and deliveries. A mapping: its runs and their replies.',
      ),
      el(
        'div',
        { className: 'actions' },
        scope,
        key,
        note,
        ui.actionButton('Pause', () =>
          call('pause', withNote(selector(scope.value, key.value)), 'Paused; requests are still stored.'),
        ),
      ),
      el('h3', {}, 'Drain for a deploy'),
      el('p', { className: 'muted' }, 'Work in flight finishes, nothing new starts, until resumed.'),
      el(
        'div',
        { className: 'actions' },
        ui.actionButton('Drain all replicas', async () => {
          if (!confirm('Hold all dispatch on every replica until resumed?')) return;
          await call('drain', withNote({}), 'Draining every replica.');
        }),
        replicaButton,
      ),
    ),
  };
}

function holdsTable(holds, ui, call) {
  if (holds.length === 0) return el('p', { id: 'dispatch-state' }, 'Dispatch is running: nothing is held.');
  return table(
    ['held', 'kind', 'since', 'note', ''],
    holds.map((h) => {
      const tr = el(
        'tr',
        {},
        el('td', {}, what(h)),
        el('td', {}, h.kind === 'drain' ? 'drained' : 'paused'),
        el('td', {}, time(h.at)),
        el('td', { className: 'reason' }, h.note ?? ''),
        el(
          'td',
          {},
          ui.actionButton('Resume', () => call('resume', selector(h.scope, h.key), `Resumed ${what(h)}.`)),
        ),
      );
      tr.dataset.hold = `${h.scope}:${h.key}`;
      return tr;
    }),
  );
}

/**
 * Renders the view into `content`; `ui` gives the page's helpers: `api(method, path)`, `actionButton`,
 * `setStatus`, `toolbar`, `rerender`. Resolves `true`: the view refreshes itself.
 */
export async function dispatchView(content, ui) {
  const state = await ui.api('GET', '/dispatch');
  const call = async (verb, params, done) => {
    await ui.api('POST', `/dispatch/${verb}?${new URLSearchParams(params)}`);
    ui.setStatus(done);
    await ui.rerender();
  };
  ui.toolbar(
    el('span', { className: 'muted' }, 'Requests are accepted and stored whatever is held; held work waits here.'),
  );
  if (content.querySelector('#dispatch-controls') === null) {
    const c = controls(state, ui, call);
    content.replaceChildren(
      el('div', { className: 'card', id: 'dispatch' }, el('h2', {}, 'Dispatch'), el('div', { id: 'dispatch-holds' })),
      c.node,
      el('div', { className: 'card' }, el('h3', {}, 'In flight'), el('div', { id: 'dispatch-inflight' })),
    );
  }
  const replica = state.replica;
  content.querySelector('#dispatch-holds').replaceChildren(holdsTable(state.holds, ui, call));
  content
    .querySelector('#replica-control')
    .replaceChildren(
      replica.draining
        ? ui.actionButton('Resume this replica', () => call('resume', { replica: '1' }, 'This replica claims again.'))
        : ui.actionButton('Drain this replica', () => call('drain', { replica: '1' }, 'This replica drains.'), true),
    );
  content.querySelector('#dispatch-inflight').replaceChildren(
    fields([
      ['this replica', `${replica.draining ? 'draining; ' : ''}${inFlight(replica.inFlight)}`],
      ['every replica', inFlight(state.fleet.inFlight)],
    ]),
  );
  return true;
}
