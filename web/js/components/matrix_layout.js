// How a matrix uses the screen when it is big or narrow: a fleet of one hardware class pivots a
// parameter into the columns (a single `cpu` column of 600 rows says nothing per column), the
// compact heat view (each cell a coloured square, its words on hover), and "Copy as Markdown" (the
// daemon's Markdown, the one `gauntlet matrix --format markdown` prints). Kept apart from the
// renderer (matrix.js) so each view option is one function.

import {request} from '../api.js';
import {h} from '../dom.js';

/**
 * A matrix answered with hardware columns that holds one hardware class only: when its rows are two
 * parameters and the person did not choose the columns (`explicit` false), the second row parameter
 * becomes the columns. The cells are the same ones (each folds the same configs: one class, the same
 * hidden parameters), so this is a reshape, not a new query. `order`: the declared values of that
 * parameter, for the column order. Returns {m, layout: {rows, cols}, hardware}: `hardware` the one
 * class (or null), `layout` what the view shows (what a CSV or Markdown link should ask for).
 */
export function oneHardware(m, {explicit = false, order = []} = {}) {
  const layout = {rows: m.rows || [], cols: m.cols};
  const classes = m.hardware || (m.cols === 'hardware' ? m.col_keys : null) || [];
  if (classes.length !== 1) return {m, layout, hardware: null};
  const hardware = classes[0];
  if (m.cols !== 'hardware' || explicit || (m.rows || []).length !== 2) return {m: {...m, one_hardware: hardware}, layout, hardware};
  const [a, b] = m.rows;
  const rank = new Map(order.map((v, i) => [String(v), i]));
  const rowKeys = [];
  const seenRow = new Set();
  const firstAt = new Map();
  m.row_keys.forEach((rk, i) => {
    if (!seenRow.has(rk[0])) seenRow.add(rk[0]), rowKeys.push([rk[0]]);
    if (!firstAt.has(rk[1])) firstAt.set(rk[1], i);
  });
  // Declared order first; values the suite does not declare after, as they first appeared.
  const colKeys = [...firstAt.keys()].sort((x, y) => (rank.get(x) ?? 1e9) - (rank.get(y) ?? 1e9) || firstAt.get(x) - firstAt.get(y));
  const cells = (m.cells || []).map((c) => ({...c, row: [c.row[0]], col: c.row[1]}));
  return {m: {...m, rows: [a], cols: b, row_keys: rowKeys, col_keys: colKeys, cells, one_hardware: hardware},
    layout: {rows: [a], cols: b}, hardware};
}

/**
 * The matrix's view switch: a pressed-state button that puts the view in its compact heat form
 * (class `mx-heat` on `view`) and back, keeping the choice in the URL (`view=heat`) without a new
 * render. `on`: whether it starts compact.
 */
export function heatToggle(view, on) {
  const button = h('button', {type: 'button', class: 'mx-heat-toggle', 'aria-pressed': String(!!on), 'data-testid': 'heat-toggle',
    title: 'Each cell a coloured square; its verdict and reason on hover'}, 'Compact heat view');
  const set = (heat) => {
    view.classList.toggle('mx-heat', heat);
    button.setAttribute('aria-pressed', String(heat));
    const [path, query = ''] = location.hash.split('?');
    const q = new URLSearchParams(query);
    if (heat) q.set('view', 'heat');
    else q.delete('view');
    const next = q.toString() ? `${path}?${q}` : path;
    if (next !== location.hash) history.replaceState(null, '', next);
  };
  view.classList.toggle('mx-heat', !!on);
  button.addEventListener('click', () => set(!view.classList.contains('mx-heat')));
  return button;
}

/**
 * "Copy as Markdown": fetches `url()` (the matrix API with format=markdown, as the view shows it)
 * and puts it on the clipboard; where the browser refuses (no permission, not a secure context) the
 * text is shown selected in a box below, to copy by hand. Returns the button and that box.
 */
export function copyMarkdown(url) {
  const status = h('span', {class: 'muted', role: 'status', 'data-testid': 'copy-status'});
  const box = h('textarea', {class: 'copy-box', readonly: true, hidden: true, rows: 8, 'aria-label': 'The matrix as Markdown', 'data-testid': 'copy-box'});
  const button = h('button', {type: 'button', 'data-testid': 'copy-markdown', title: 'The table gauntlet matrix --format markdown prints, with hardware and fingerprint'},
    'Copy as Markdown');
  button.addEventListener('click', async () => {
    status.textContent = 'Copying…';
    let text;
    try {
      const res = await request(url(), {headers: {Accept: 'text/markdown'}});
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      text = await res.text();
    } catch (e) {
      status.textContent = `Could not fetch the Markdown: ${e.message}`;
      return;
    }
    try {
      await navigator.clipboard.writeText(text);
      box.hidden = true;
      status.textContent = 'Copied as Markdown.';
    } catch {
      box.value = text;
      box.hidden = false;
      box.select();
      status.textContent = 'The browser did not allow copying: the Markdown is selected below.';
    }
  });
  return {button, status, box};
}
