// The compatibility matrix: rows are parameter values, columns hardware classes (or a parameter),
// each cell the latest verdict with its reason ("❌ illegal memory access", "✅ 2,100 tok/s"), linked
// to the trial. Built as one HTML string: a 10,000-cell matrix renders in tens of milliseconds.

import {esc, fmtMetric, fmtTime, h} from '../dom.js';
import {VERDICTS, shortReason, verdictClass, verdictIcon, verdictLabel} from '../verdict.js';

const keyOf = (row, col) => JSON.stringify(row) + '\u0000' + col;

function cellHtml(c) {
  if (!c) return '<td class="v-none empty"><span class="cell" aria-label="not run">·</span></td>';
  const v = c.verdict;
  // No verdict yet: the cell counts trials by state (queued, running).
  const text = !v ? Object.keys(c.counts || {}).join(', ') || 'pending'
    : v === 'passed' && c.metric ? fmtMetric(c.metric) : shortReason(v, c.signature);
  const counts = Object.entries(c.counts || {}).filter(([, n]) => n);
  const runs = counts.reduce((a, [, n]) => a + n, 0);
  const title = [verdictLabel(v), c.signature, c.metric ? `${c.metric.name} = ${fmtMetric(c.metric)}` : '',
    counts.map(([k, n]) => `${n} ${k}`).join(', '), c.last_seen ? `last seen ${fmtTime(c.last_seen)}` : '']
    .filter(Boolean).join('\n');
  const n = runs > 1 ? `<span class="n">×${runs}</span>` : '';
  const body = `${verdictIcon(v)} ${esc(text)}${n}`;
  const inner = c.trial != null
    ? `<a href="#/trials/${c.trial}" title="${esc(title)}">${body}</a>`
    : `<span class="cell" title="${esc(title)}">${body}</span>`;
  return `<td class="${verdictClass(v)}" data-verdict="${esc(v || 'pending')}">${inner}</td>`;
}

/** Renders matrix API data into a new element (legend + scrollable table). */
export function matrixView(m) {
  const wrap = h('div', {class: 'matrix-view'});
  if (!m.row_keys?.length || !m.col_keys?.length) {
    wrap.append(h('p', {class: 'muted'}, 'No results yet for this selection.'));
    return wrap;
  }
  const seen = new Set((m.cells || []).map((c) => c.verdict));
  const legend = h('div', {class: 'legend', 'aria-label': 'Verdict colours'});
  for (const v of VERDICTS) if (seen.has(v)) legend.append(h('span', {class: `badge ${verdictClass(v)}`}, `${verdictIcon(v)} ${verdictLabel(v)}`));
  if (m.key_metric) legend.append(h('span', {class: 'muted'}, `passed cells show ${m.key_metric}`));
  wrap.append(legend);

  const byKey = new Map();
  for (const c of m.cells || []) byKey.set(keyOf(c.row, c.col), c);
  const rowNames = m.rows || [];
  const parts = ['<table class="matrix"><caption class="skip">Verdict per ', esc(rowNames.join(' × ')), ' and ',
    esc(m.cols), '</caption><thead><tr>'];
  for (const r of rowNames) parts.push(`<th class="rowkey" scope="col">${esc(r)}</th>`);
  for (const col of m.col_keys) parts.push(`<th scope="col">${esc(col)}</th>`);
  parts.push('</tr></thead><tbody>');
  for (const row of m.row_keys) {
    parts.push('<tr>');
    for (const v of row) parts.push(`<th class="rowkey" scope="row">${esc(v)}</th>`);
    for (const col of m.col_keys) parts.push(cellHtml(byKey.get(keyOf(row, col))));
    parts.push('</tr>');
  }
  parts.push('</tbody></table>');
  const scroller = h('div', {class: 'matrix-wrap', tabindex: 0, 'aria-label': 'Compatibility matrix'});
  scroller.innerHTML = parts.join('');
  wrap.append(scroller);
  return wrap;
}
