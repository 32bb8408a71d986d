// Small DOM helpers for the dashboard. Values are only ever set as text, never parsed as HTML.

export const $ = (id) => document.getElementById(id);

/** Builds an element: el('td', {className: 'x'}, 'text', childNode, …). */
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

export const time = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toLocaleString());
export const link = (href, text) => el('a', { href }, text);

export function badge(text, status) {
  const cls =
    typeof status === 'number'
      ? status < 300
        ? 'ok'
        : status < 500
          ? 'warn'
          : 'bad'
      : ({
          succeeded: 'ok',
          sent: 'ok',
          failed: 'bad',
          timed_out: 'bad',
          skipped: 'warn',
          held: 'warn',
          queued: '',
          running: '',
          pending: '',
        }[status] ?? '');
  return el('span', { className: `badge ${cls}` }, text);
}

export function table(headers, rows) {
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows),
  );
}

export function row(cells, href, testId) {
  const tr = el('tr', {}, ...cells.map((c) => (c instanceof Node && c.tagName === 'TD' ? c : el('td', {}, c))));
  tr.addEventListener('click', (e) => {
    if (e.target.tagName !== 'A') location.hash = href;
  });
  if (testId) tr.dataset.id = testId;
  return tr;
}

export function fields(pairs) {
  return el('dl', {}, ...pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v ?? '—')]));
}
