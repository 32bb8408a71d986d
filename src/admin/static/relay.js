// The relay view. On a relay: what waits for the home, how old the oldest request is, and the dead
// letters with their reasons (requeue puts one back). On a home: whether its relay answers.
// Every value (a hook name, a reason from the home, a URL) is set as text only, as in the other views.
import { badge, el, fields, table, time } from '/admin/dom.js';

const ago = (ms) => {
  if (ms === null) return 'none waiting';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
};

function relayCard(state) {
  const b = state.backlog;
  return el(
    'div',
    { className: 'card', id: 'relay-backlog' },
    el('h2', {}, 'Relay backlog'),
    fields([
      ['waiting for the home', String(b.pending)],
      ['of them leased now', String(b.leased)],
      [
        'oldest waiting',
        b.oldestPendingAt === null ? 'none waiting' : `${time(b.oldestPendingAt)} (${ago(b.oldestPendingAt)})`,
      ],
      ['dead letters', String(b.dead)],
    ]),
  );
}

function deadTable(dead, ui) {
  if (dead.length === 0) return el('p', { className: 'muted', id: 'relay-dead-none' }, 'No dead letters.');
  return table(
    ['received', 'hook', 'status', 'code', 'reason', 'leases', ''],
    dead.map((r) => {
      const tr = el(
        'tr',
        {},
        el('td', {}, time(r.receivedAt)),
        el('td', {}, r.hook),
        el('td', {}, r.status === null ? badge('no answer', 'failed') : badge(String(r.status), r.status)),
        el('td', {}, r.code ?? ''),
        el('td', { className: 'reason' }, r.reason ?? ''),
        el('td', {}, String(r.attempts)),
        el(
          'td',
          {},
          ui.actionButton(
            'Requeue',
            async () => {
              await ui.api('POST', `/relay/requests/${encodeURIComponent(r.id)}/requeue`);
              ui.setStatus('Requeued: the home gets it at its next lease.');
              await ui.rerender();
            },
            true,
          ),
        ),
      );
      tr.dataset.id = r.id;
      return tr;
    }),
  );
}

function recentTable(requests) {
  if (requests.length === 0) return el('p', { className: 'muted' }, 'No requests yet.');
  return table(
    ['received', 'hook', 'verified by', 'state', 'leases', 'ended'],
    requests.map((r) =>
      el(
        'tr',
        {},
        el('td', {}, time(r.receivedAt)),
        el('td', {}, r.hook),
        el('td', {}, r.auth),
        el('td', {}, badge(r.state, r.state === 'done' ? 'sent' : r.state === 'dead' ? 'failed' : 'pending')),
        el('td', {}, String(r.attempts)),
        el('td', {}, time(r.endedAt)),
      ),
    ),
  );
}

function homeCard(pull) {
  const c = pull.counts ?? {};
  return el(
    'div',
    { className: 'card', id: 'relay-pull' },
    el('h2', {}, 'Pulling from a relay'),
    fields([
      ['relay', pull.url],
      ['relay answers', pull.relayUp ? badge('yes', 'sent') : badge('no', 'failed')],
      ['failing since', pull.failingSince === null ? null : time(pull.failingSince)],
      ['last error', pull.lastError],
      ['last lease', time(pull.lastLeaseAt)],
      [
        'pulled since start',
        `${c.accepted ?? 0} accepted, ${c.duplicate ?? 0} duplicates, ${c.skipped ?? 0} skipped, ${c.refused ?? 0} refused, ${c.failed ?? 0} failed here`,
      ],
    ]),
    el('p', { className: 'muted' }, 'This gateway serves its own door whether or not the relay answers.'),
  );
}

/**
 * Renders the view into `content`; `ui` gives the page's helpers (`api`, `actionButton`,
 * `setStatus`, `toolbar`, `rerender`). Resolves `true`: the view refreshes itself.
 */
export async function relayView(content, ui) {
  let state;
  try {
    state = await ui.api('GET', '/relay');
  } catch (error) {
    if (error.status !== 404) throw error;
    ui.toolbar();
    content.replaceChildren(
      el(
        'p',
        { className: 'muted', id: 'relay-none' },
        'This gateway is no relay and pulls from none (see docs/relay.md).',
      ),
    );
    return false;
  }
  if (state.role === 'home') {
    ui.toolbar(el('span', { className: 'muted' }, 'A home gateway: it leases what its relay holds.'));
    content.replaceChildren(homeCard(state.pull));
    return true;
  }
  ui.toolbar(el('span', { className: 'muted' }, 'A relay: requests wait here until the home acknowledges them.'));
  content.replaceChildren(
    relayCard(state),
    el(
      'div',
      { className: 'card' },
      el('h3', {}, 'Dead letters'),
      el('div', { id: 'relay-dead' }, deadTable(state.dead, ui)),
    ),
    el('div', { className: 'card' }, el('h3', {}, 'Latest requests'), recentTable(state.requests)),
  );
  return true;
}
