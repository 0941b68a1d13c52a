// The compatibility matrix: rows are parameter values, columns hardware classes (or a parameter),
// each cell the latest verdict with its reason ("✗ illegal memory access", "✓ 2,100 tok/s"), linked
// to the trial. Built as one HTML string, so a 10,000-cell matrix costs one parse.

import {esc, fmtMetric, fmtTime, h} from '../dom.js';
import {VERDICTS, shortReason, verdictClass, verdictIcon, verdictLabel} from '../verdict.js';

const keyOf = (row, col) => JSON.stringify(row) + '\u0000' + col;

function cellTitle(c) {
  const counts = Object.entries(c.counts || {}).filter(([, n]) => n);
  return [verdictLabel(c.verdict), c.signature, c.metric ? `${c.metric.name} = ${fmtMetric(c.metric)}` : '',
    counts.map(([k, n]) => `${n} ${k}`).join(', '), c.last_seen ? `last seen ${fmtTime(c.last_seen)}` : '']
    .filter(Boolean).join('\n');
}

// Kept lean (no title, no data attributes): 10,000 of these are parsed on a sweep's first view.
// Tooltips are attached on hover or focus instead (see matrixView).
function cellHtml(c) {
  if (!c) return '<div role="cell" class="mx-cell v-none"><span aria-label="not run">·</span></div>';
  const v = c.verdict;
  const text = cellText(c);  // no verdict yet: the trials' states (queued, running)
  let runs = 0;
  for (const k in c.counts) runs += c.counts[k];
  const body = `${verdictIcon(v)} ${esc(text)}${runs > 1 ? `<span class="n">×${runs}</span>` : ''}`;
  return c.trial != null
    ? `<div role="cell" class="mx-cell ${verdictClass(v)}"><a href="#/trials/${c.trial}">${body}</a></div>`
    : `<div role="cell" class="mx-cell ${verdictClass(v)}"><span>${body}</span></div>`;
}

const CELL_PX = 240;  // widest a column gets
const ROW_PX = 28;
const FIRST_ROWS = 40;  // more than a 75vh scroll box shows
const CHUNK_CELLS = 2500;

/**
 * Completes the matrix when the browser is idle: first the columns left out of the first
 * `rendered` rows (when only `firstCols` columns were built), then the remaining rows, a chunk at
 * a time. Stops if the grid leaves the page (a refresh replaced it, or the person navigated).
 */
function appendRest(grid, {rows, rendered, firstCols, nCol, rowHtml, restCells, perChunk}) {
  const idle = window.requestIdleCallback || ((fn) => setTimeout(fn, 16));
  let widen = firstCols < nCol ? 0 : rendered;  // next row to widen
  let next = rendered;  // next row to append
  const done = () => {
    grid.dataset.complete = 'true';
    performance.mark('gauntlet:matrix-complete');
  };
  const step = () => {
    if (!grid.isConnected) return;
    if (widen < rendered) {
      const els = grid.querySelectorAll(':scope > .mx-body');
      const end = Math.min(rendered, widen + perChunk);
      for (; widen < end; widen++) els[widen].insertAdjacentHTML('beforeend', restCells(rows[widen], firstCols));
    } else {
      const end = Math.min(rows.length, next + perChunk);
      const html = [];
      for (; next < end; next++) html.push(rowHtml(rows[next]));
      grid.insertAdjacentHTML('beforeend', html.join(''));
    }
    if (widen < rendered || next < rows.length) idle(step, {timeout: 200});
    else done();
  };
  // Waits for the page's first view to be complete: appended earlier, these cells would fill the
  // idle gaps while other requests are in flight and delay the first paint.
  const begin = () => (widen >= rendered && next >= rows.length ? done() : idle(step, {timeout: 200}));
  if (document.documentElement.dataset.ready) begin();
  else window.addEventListener('gauntlet:ready', begin, {once: true});
}

const keyPx = (values, name) => Math.min(260, Math.max(64, 26 + 7.6 * Math.max(name.length, ...values.map((v) => String(v).length))));
const cellText = (c) => (!c.verdict ? Object.keys(c.counts || {}).join(', ') || 'pending'
  : c.verdict === 'passed' && c.metric ? fmtMetric(c.metric) : shortReason(c.verdict, c.signature));

/**
 * Renders matrix API data into a new element (legend + scrollable grid). Rows are separate boxes
 * with `content-visibility: auto`, so the browser lays out only the rows in view, and every column
 * has a fixed width, which keeps rows aligned. Rows beyond the first screenful (or beyond
 * `keep.scrollTop`, when a live refresh replaces a scrolled matrix) are appended in idle-time
 * chunks after the first paint, so a 100 × 100 matrix never blocks the page for long.
 */
export function matrixView(m, keep = {}) {
  const wrap = h('div', {class: 'matrix-view'});
  if (!m.row_keys?.length || !m.col_keys?.length) {
    wrap.append(h('p', {class: 'muted'}, 'No results yet for this selection.'));
    return wrap;
  }
  const seen = new Set((m.cells || []).map((c) => c.verdict));
  const legend = h('div', {class: 'legend', 'aria-label': 'Verdict colours'});
  for (const v of VERDICTS) if (seen.has(v)) legend.append(h('span', {class: `badge ${verdictClass(v)}`}, `${verdictIcon(v)} ${verdictLabel(v)}`));
  if (m.key_metric && seen.has('passed')) legend.append(h('span', {class: 'muted'}, `passed cells show ${m.key_metric}`));
  wrap.append(legend);

  const byKey = new Map();
  for (const c of m.cells || []) byKey.set(keyOf(c.row, c.col), c);
  const rowNames = m.rows || [];
  const nRow = rowNames.length;
  const keyWidths = rowNames.map((name, i) => Math.round(keyPx(m.row_keys.map((r) => r[i]), name)));
  const lefts = keyWidths.map((_, i) => keyWidths.slice(0, i).reduce((a, b) => a + b, 0));
  // Column width from a sample of the cells' texts: roomy for a small matrix, compact for a big one.
  let longest = 8;
  for (let i = 0; i < Math.min(400, m.cells?.length || 0); i++) longest = Math.max(longest, cellText(m.cells[i]).length + 4);
  const cellPx = Math.round(Math.min(CELL_PX, Math.max(110, 24 + 7 * longest)));
  const template = [...keyWidths.map((w) => `${w}px`), `repeat(${m.col_keys.length}, ${cellPx}px)`].join(' ');
  const width = keyWidths.reduce((a, b) => a + b, 0) + cellPx * m.col_keys.length;
  // Where each key column sticks is set once on the grid (--key-left-N, read by app.css) rather
  // than repeated on every key cell of every row.
  const keyCell = (role, i, text) => `<div role="${role}" class="mx-key${i === nRow - 1 ? ' last' : ''}">${esc(text)}</div>`;

  const parts = [`<div class="mx-row mx-head" role="row">`];
  rowNames.forEach((r, i) => parts.push(keyCell('columnheader', i, r)));
  for (const col of m.col_keys) parts.push(`<div role="columnheader" class="mx-col">${esc(col)}</div>`);
  parts.push('</div>');
  const cells = (row, from, to) => {
    const out = [];
    for (let i = from; i < to; i++) out.push(cellHtml(byKey.get(keyOf(row, m.col_keys[i]))));
    return out.join('');
  };
  const nCol = m.col_keys.length;
  const rowHtml = (row, upto = nCol) => {
    let keys = '';
    row.forEach((v, i) => (keys += keyCell('rowheader', i, v)));
    return `<div class="mx-row mx-body" role="row">${keys}${cells(row, 0, upto)}</div>`;
  };
  // The first view holds what the scroll box can show: enough rows for its height (or for where a
  // refreshed matrix was scrolled to) and enough columns for the window's width.
  const first = Math.min(m.row_keys.length, Math.max(FIRST_ROWS, Math.ceil(((keep.scrollTop || 0) + 1600) / ROW_PX)));
  const firstCols = Math.min(nCol, Math.ceil(((keep.scrollLeft || 0) + Math.max(window.innerWidth, 1600)) / cellPx) + 1);
  for (let r = 0; r < first; r++) parts.push(rowHtml(m.row_keys[r], firstCols));
  // Column widths come from the data, so the template, width and key offsets are custom properties.
  const vars = {'--tpl': template, '--grid-w': `${width}px`};
  lefts.forEach((px, i) => (vars[`--key-left-${i + 1}`] = `${px}px`));
  const grid = h('div', {class: 'mx', role: 'table', 'aria-label': `Verdict per ${rowNames.join(' × ')} and ${m.cols}`,
    'aria-rowcount': m.row_keys.length + 1, vars});
  grid.innerHTML = parts.join('');
  const scroller = h('div', {class: 'matrix-wrap', tabindex: 0, 'aria-label': 'Compatibility matrix, scrollable'}, grid);
  // Tooltips (verdict, signature, metric, counts, last seen) on first hover or keyboard focus.
  const explain = (e) => {
    const cell = e.target.closest('.mx-cell');
    if (!cell || cell.dataset.titled) return;
    cell.dataset.titled = '1';
    const rowEl = cell.parentElement;
    const r = Array.prototype.indexOf.call(grid.children, rowEl) - 1;
    const ci = Array.prototype.indexOf.call(rowEl.children, cell) - nRow;
    const c = byKey.get(keyOf(m.row_keys[r], m.col_keys[ci]));
    if (c) (cell.firstElementChild || cell).title = cellTitle(c);
  };
  scroller.addEventListener('mouseover', explain);
  scroller.addEventListener('focusin', explain);
  wrap.append(scroller);
  if (keep.scrollTop || keep.scrollLeft) requestAnimationFrame(() => scroller.scrollTo(keep.scrollLeft || 0, keep.scrollTop || 0));
  appendRest(grid, {rows: m.row_keys, rendered: first, firstCols, nCol, rowHtml, restCells: (row, from) => cells(row, from, nCol),
    perChunk: Math.max(1, Math.floor(CHUNK_CELLS / nCol))});
  return wrap;
}

/** Where a matrix inside `box` is scrolled to, so a live refresh can keep the person's place. */
export function scrollOf(box) {
  const el = box.querySelector('.matrix-wrap');
  return el ? {scrollTop: el.scrollTop, scrollLeft: el.scrollLeft} : {};
}
