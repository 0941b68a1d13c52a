// The compatibility matrix: rows are parameter values, columns hardware classes (or a parameter).
// A cell holds every config the pivot folds into it (the parameters it hides): one verdict with its
// reason when they agree ("✗ crashed: illegal memory access", "◷ timeout in stage check",
// "✓ 1,800–2,100 tok/s"), a split look with "◐ mixed: k/n passed" and the verdicts present when they
// disagree (mixed), stripes when one config got different verdicts under one software fingerprint
// (flaky). Mixed and flaky cells open their breakdown on click; the others link to their trial. The sweep page and the matrix explorer both render with
// matrixView, so one cell looks the same in both. Built as one HTML string: 10,000 cells, one parse.

import {esc, fill, fmtConfig, fmtMetric, fmtNum, fmtTime, h, plural} from '../dom.js';
import {href} from '../router.js';
import {copyMarkdown, heatToggle} from './matrix_layout.js';
import {VERDICTS, bySeverity, countsAsRun, isVerdict, verdictClass, verdictFamily, verdictIcon, verdictLabel} from '../verdict.js';

const keyOf = (row, col) => JSON.stringify(row) + '\u0000' + col;
const opens = (c) => c.state === 'mixed' || c.state === 'flaky';

/** The key metric over a cell's passed configs: one number when they agree, else "min–max unit". */
export function metricRange(c) {
  const hi = c.metric_max || c.metric;
  const lo = c.metric_min || hi;
  if (!hi || hi.value == null) return '';
  if (lo.value == null || fmtNum(lo.value) === fmtNum(hi.value)) return fmtMetric(hi);
  return (lo.unit || '') === (hi.unit || '') ? `${fmtNum(lo.value)}–${fmtMetric(hi)}` : `${fmtMetric(lo)}–${fmtMetric(hi)}`;
}

/**
 * The verdicts a disagreeing cell holds, most severe first: for a mixed cell its configs' latest
 * verdicts (the breakdown); for a flaky one also what its runs got (`counts`), since the flaky
 * config's latest verdict may be the good one.
 */
export function presentVerdicts(c) {
  const vs = new Set((c.breakdown || []).map((b) => b.verdict));
  if (c.state === 'flaky') for (const [v, n] of Object.entries(c.counts || {})) if (n && isVerdict(v) && v !== 'cancelled') vs.add(v);
  return bySeverity(vs);
}

/**
 * What a cell shows: its classes and its text (without markup). A mixed or flaky cell is split
 * between the colours of its two extremes: passed (when any config passed) or its mildest verdict,
 * and its most severe one; app.css draws the split from the lo-FAMILY and hi-FAMILY classes.
 */
export function cellFace(c) {
  const face = cellFaceOf(c);
  // The dispatch layer (?layer=dispatch): the kernel family that carried the cell's latest run.
  if (typeof c.dispatch === 'string') face.text += ` [${c.dispatch}]`;
  // The drift layer (?layer=drift): the cell's most severe disagreement with what was declared.
  const d = driftText(c);
  if (d) {
    face.text += ` [${d}]`;
    face.cls += ` drift-${c.drift.kind}`;
  }
  // The evidence layer (?layer=evidence): the weakest level over the cell's configs.
  if (typeof c.evidence === 'string') {
    face.text += ` [${c.evidence.replace('_', ' ')}]`;
    face.cls += ` ev-${c.evidence}`;
  }
  return face;
}

const DRIFT_LABEL = {supported_but_failing: 'declared supported, fails', unsupported_but_passing: 'declared unsupported, passes',
  undeclared: 'undeclared'};
/** "declared supported, fails: crashed:x" or "declared unsupported, passes: 812 tok/s"; '' when it agrees. */
export function driftText(c) {
  const d = c.drift;
  if (!d || typeof d !== 'object' || !DRIFT_LABEL[d.kind]) return '';
  const by = (d.declared_by || []).includes('framework') ? ' (framework)' : '';
  let text = DRIFT_LABEL[d.kind] + by;
  if (d.signature) text += `: ${d.signature}`;
  else if (d.metric) text += `: ${fmtMetric({value: d.metric.mean, unit: d.metric.unit})}`;
  return text;
}

function cellFaceOf(c) {
  const v = c.verdict;
  // Runs are judged trials, as the API counts them (pass_rate.runs): a pruned (skipped) or cancelled
  // trial never ran, and queued or running ones have not yet.
  let runs = 0;
  for (const k in c.counts) if (countsAsRun(k)) runs += c.counts[k];
  if (opens(c)) return disagreementFace(c);
  // No verdict yet: the trials' states (queued, running). A failed cell says its verdict and reason
  // in the daemon's words (`reason`: core/cell_reason.h, the CLI's too), never a bare signature part.
  const text = !v ? Object.keys(c.counts || {}).join(', ') || 'pending'
    : v === 'passed' ? metricRange(c) || verdictLabel(v) : c.reason || verdictLabel(v);
  // A failure judged from the exit status alone is a guess (core/basis.h): outlined dotted, and its
  // reason says "unclassified".
  return {cls: verdictClass(v) + (c.unclassified ? ' unclassified' : ''), text: `${verdictIcon(v)} ${text}`, runs};
}

/**
 * A mixed or flaky cell, in words: "◐ mixed: 2/3 passed · ✗ out of memory 1" (configs per verdict),
 * "≈ flaky: 5/6 runs passed · ✗ crashed 1" (runs per verdict). Its split look comes from its two
 * extremes: passed (when any config passed) or its mildest verdict, and its most severe one;
 * app.css draws the split from the lo-FAMILY and hi-FAMILY classes.
 */
function disagreementFace(c) {
  const v = c.verdict;
  const present = presentVerdicts(c);
  const others = present.filter((x) => x !== 'passed');
  const hi = verdictFamily(others[0] || v);
  const lo = present.includes('passed') ? 'ok' : verdictFamily(others[others.length - 1] || v);
  const configs = {};
  for (const b of c.breakdown || []) configs[b.verdict] = (configs[b.verdict] || 0) + b.configs;
  let parts;
  if (c.state === 'flaky') {
    const p = c.pass_rate;
    parts = [p ? `≈ flaky: ${fmtNum(p.passed)}/${fmtNum(p.runs)} runs passed` : '≈ flaky',
      ...others.map((x) => `${verdictIcon(x)} ${verdictLabel(x)}${c.counts?.[x] ? ` ${fmtNum(c.counts[x])}` : ''}`)];
  } else {
    parts = [`◐ mixed: ${fmtNum(c.passed || 0)}/${fmtNum(c.configs || 0)} passed`,
      ...others.map((x) => `${verdictIcon(x)} ${verdictLabel(x)}${configs[x] ? ` ${fmtNum(configs[x])}` : ''}`)];
  }
  return {cls: `mx-${c.state} ${verdictClass(v)} lo-${lo} hi-${hi}`, text: parts.join(' · '), runs: 0};
}

const pct = (x) => `${Math.round(100 * x)}%`;
/** "4/6 passed = 67% (95% Wilson interval 30–90%)": a cell's or config's measured pass rate. */
export function fmtRate(p) {
  return p ? `${fmtNum(p.passed)}/${fmtNum(p.runs)} passed = ${pct(p.rate)} (95% Wilson interval ${pct(p.low)}–${pct(p.high)})` +
    (p.reused ? `; ${fmtNum(p.reused)} reused, not counted` : '') : '';
}

function cellTitle(c) {
  const counts = Object.entries(c.counts || {}).filter(([, n]) => n);
  const range = metricRange(c);
  const state = c.state === 'mixed' ? `mixed: ${fmtNum(c.passed || 0)} of ${plural(c.configs || 0, 'config')} passed`
    : c.state === 'flaky' ? `flaky: ${plural(c.flaky_count ?? c.flaky?.length ?? 0, 'config')} got different verdicts under one fingerprint`
    : c.configs > 1 ? `${plural(c.configs, 'config')}, ${fmtNum(c.passed || 0)} passed` : '';
  return [cellFace(c).text, state || verdictLabel(c.verdict), c.signature, range ? `${c.metric_max?.name || c.metric?.name} = ${range}` : '',
    `runs: ${counts.map(([k, n]) => `${n} ${k}`).join(', ')}`, c.reused ? `reused: ${fmtNum(c.reused)} (copies of earlier verdicts, not runs)` : '',
    c.pass_rate && c.pass_rate.runs > 1 ? fmtRate(c.pass_rate) : '',
    c.last_seen ? `last seen ${fmtTime(c.last_seen)}` : '',
    c.drift && c.drift.reason ? `the framework said: ${c.drift.reason}` : '',
    c.evidence_counts ? `evidence: ${Object.entries(c.evidence_counts).map(([k, n]) => `${n} ${k}`).join(', ')}` : '',
    opens(c) ? 'click for the breakdown by hidden parameter' : '']
    .filter(Boolean).join('\n');
}

// Kept lean (no title, no data attributes): 10,000 of these are parsed on a sweep's first view.
// Tooltips are attached on hover or focus instead, and a breakdown is built when it is opened
// (see matrixView).
/** Whether a cell has failed trials a rerun could take: it failed, or some of its configs did. */
export const rerunnable = (c) => c && (c.state === 'failed' || c.state === 'mixed' || c.state === 'flaky');
// The glyph comes from app.css (::before), so a cell's text is the same with or without the button.
const RERUN = '<button type="button" class="mx-rerun" aria-label="Rerun the failed trials of this cell" title="Rerun the failed trials of this cell"></button>';

function cellHtml(c, rerun) {
  if (!c) return '<div role="cell" class="mx-cell v-none"><span aria-label="not run">·</span></div>';
  const f = cellFace(c);
  // "N runs" counts runs only; results filed by reuse are said apart ("N reused"), never as runs.
  const body = `${esc(f.text)}${f.runs > 1 ? `<span class="n"> · ${f.runs} runs</span>` : ''}${c.reused ? `<span class="n reused"> · ${c.reused} reused</span>` : ''}`;
  const open = `<div role="cell" class="mx-cell ${f.cls}">`;
  const more = rerun && rerunnable(c) ? RERUN : '';
  if (opens(c)) return `${open}<button type="button" class="mx-open" aria-haspopup="dialog">${body}</button>${more}</div>`;
  return c.trial != null ? `${open}<a href="#/trials/${c.trial}">${body}</a>${more}</div>` : `${open}<span>${body}</span>${more}</div>`;
}

/**
 * The rerun selection (POST /api/v1/sweeps/{id}/rerun's body) of a cell: the configs holding its row
 * values (and its column's, when the column is a parameter), on its hardware class; the daemon picks
 * their trials that did not pass.
 */
export function cellRerunSelection(m, c) {
  const config = {};
  m.rows.forEach((r, i) => (config[r] = c.row[i]));
  if (m.cols !== 'hardware') config[m.cols] = c.col;
  const sel = {configs: [config]};
  if (m.cols === 'hardware' && c.col !== 'unassigned') sel.targets = [c.col];
  return sel;
}

/**
 * The trials list filter for a cell: its suite (and sweep), its row values and its column (a
 * hardware class or a parameter value). `extra` narrows it (a verdict, hidden parameter values).
 */
function cellTrials(m, c, extra = {}) {
  const q = {suite: m.suite, sweep: m.sweep};
  m.rows.forEach((r, i) => (q[`param.${r}`] = c.row[i]));
  if (m.cols !== 'hardware') q[`param.${m.cols}`] = c.col;
  else if (c.col !== 'unassigned') q.hardware = c.col;
  return href(['trials'], {...q, ...extra});
}

/**
 * The breakdown of a mixed or flaky cell: per verdict, how many configs, which values of the hidden
 * parameters, the signatures in full (the dialog has the room a cell lacks), and links to the trials.
 */
function breakdownBody(m, c) {
  const hidden = m.hidden || [];
  const where = [...m.rows.map((r, i) => `${r} = ${c.row[i]}`), m.cols === 'hardware' ? c.col : `${m.cols} = ${c.col}`].join(' · ');
  const rows = [...(c.breakdown || [])].sort((a, b) => VERDICTS.indexOf(a.verdict) - VERDICTS.indexOf(b.verdict));
  const order = (k) => (VERDICTS.includes(k) ? VERDICTS.indexOf(k) : VERDICTS.length);
  const runs = Object.entries(c.counts || {}).filter(([, n]) => n).sort(([a], [b]) => order(a) - order(b))
    .map(([k, n]) => `${fmtNum(n)} ${verdictLabel(k)}`).join(', ');
  const table = h('table', {class: 'list breakdown-table', 'aria-label': 'Verdicts of the configs in this cell'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Verdict'), h('th', {scope: 'col', class: 'num'}, 'Configs'),
      hidden.map((p) => h('th', {scope: 'col'}, p)), h('th', {scope: 'col'}, 'Reason'), h('th', {scope: 'col'}, 'Trials'))),
    h('tbody', {}, rows.map((b) => {
      // A hidden parameter with one value for this verdict narrows the link to exactly its configs.
      const narrow = {verdict: b.verdict};
      for (const p of hidden) if (b.values?.[p]?.length === 1) narrow[`param.${p}`] = b.values[p][0];
      return h('tr', {'data-verdict': b.verdict},
        h('td', {}, h('span', {class: `badge ${verdictClass(b.verdict)}`}, `${verdictIcon(b.verdict)} ${verdictLabel(b.verdict)}`)),
        h('td', {class: 'num', 'data-testid': 'configs'}, fmtNum(b.configs)),
        // The daemon lists at most 50 values per parameter and counts the rest (values_more).
        hidden.map((p) => h('td', {class: 'mono', 'data-param': p}, (b.values?.[p] || []).join(', ') +
          (b.values_more?.[p] ? ` and ${fmtNum(b.values_more[p])} more` : ''))),
        h('td', {class: 'signature'}, (b.signatures || []).map((s) => h('div', {}, h('code', {}, s)))),
        h('td', {}, h('a', {href: cellTrials(m, c, narrow), 'data-testid': 'trials-link'}, `${verdictLabel(b.verdict)} trials`)));
    })));
  const hiddenPart = (config) => fmtConfig(Object.fromEntries(hidden.filter((p) => p in (config || {})).map((p) => [p, config[p]])));
  const flaky = (c.flaky || []).length ? h('div', {class: 'flaky-note', 'data-testid': 'flaky'},
    h('p', {}, `≈ Flaky: ${c.flaky.length === 1 ? 'this config' : 'these configs'} got different verdicts under one software fingerprint.`),
    h('ul', {}, c.flaky.map((f) => {
      const all = {};
      for (const [k, v] of Object.entries(f.config || {})) all[`param.${k}`] = v;
      return h('li', {'data-testid': 'flaky-config'}, h('code', {}, hiddenPart(f.config) || fmtConfig(f.config)), ': ',
        f.pass_rate ? h('span', {'data-testid': 'flaky-rate'}, `${fmtRate(f.pass_rate)}; `) : '',
        h('a', {href: cellTrials(m, c, all)}, 'every run'), ', latest ', h('a', {href: `#/trials/${f.trial}`}, `trial #${f.trial}`));
    }))) : null;
  return [
    h('h2', {id: 'breakdown-title'}, where),
    h('p', {'data-testid': 'breakdown-summary'}, `${c.state === 'flaky' ? 'Flaky' : 'Mixed'}: ${fmtNum(c.passed || 0)} of ${plural(c.configs || 0, 'config')} passed`,
      hidden.length ? `; the matrix hides ${hidden.join(', ')}.` : '.', runs ? ` Runs: ${runs}.` : ''),
    flaky,
    table,
    h('p', {class: 'row'}, h('a', {href: cellTrials(m, c)}, 'All trials of this cell'),
      c.trial != null ? [' · latest ', h('a', {href: `#/trials/${c.trial}`}, `trial #${c.trial}`)] : null),
    h('form', {method: 'dialog'}, h('menu', {}, h('button', {type: 'submit'}, 'Close'))),
  ];
}

const CELL_PX = 240;  // widest a column gets
const MANY_COLS_PX = 180;  // widest one of more than six columns gets: more of them on a screen
const HEAT_PX = 22;  // a column of the compact heat view
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

/**
 * What goes above the grid besides the legend: the heat view switch, "Copy as Markdown" (with
 * `opts.markdownUrl`) and its fallback box, and, for one hardware class, that class said once.
 */
function viewOptions(wrap, m, keep, opts) {
  const tools = h('div', {class: 'row mx-tools'}, heatToggle(wrap, keep.heat ?? opts.heat));
  const out = [tools];
  if (opts.markdownUrl) {
    const copy = copyMarkdown(opts.markdownUrl);
    tools.append(copy.button, copy.status);
    out.push(copy.box);
  }
  if (m.one_hardware) out.push(h('p', {class: 'muted', 'data-testid': 'one-hardware'}, `Every result here is on ${m.one_hardware}`,
    m.cols !== 'hardware' ? `; the columns are ${m.cols}.` : '.'));
  return out;
}

/** The verdict colours and cell kinds this matrix shows, in words. */
function legendOf(m) {
  const seen = new Set();
  const states = new Set();
  for (const c of m.cells || []) {
    states.add(c.state);
    if (!opens(c)) seen.add(c.verdict);
  }
  const legend = h('div', {class: 'legend', 'aria-label': 'Verdict colours'});
  for (const v of VERDICTS) if (seen.has(v)) legend.append(h('span', {class: `badge ${verdictClass(v)}`}, `${verdictIcon(v)} ${verdictLabel(v)}`));
  if (states.has('mixed')) legend.append(h('span', {class: 'badge mx-mixed lo-ok hi-bad'}, '◐ mixed: the configs disagree'));
  if (states.has('flaky')) legend.append(h('span', {class: 'badge mx-flaky lo-ok hi-bad'}, '≈ flaky: one config, different verdicts'));
  if (m.key_metric && seen.has('passed')) legend.append(h('span', {class: 'muted'}, `passed cells show ${m.key_metric} (min–max over their configs)`));
  if (states.has('mixed') || states.has('flaky')) legend.append(h('span', {class: 'muted'}, 'click one for its breakdown'));
  return legend;
}

/**
 * Renders matrix API data into a new element (legend + scrollable grid). Rows are separate boxes
 * with `content-visibility: auto`, so the browser lays out only the rows in view, and every column
 * has a fixed width, which keeps rows aligned. Rows beyond the first screenful (or beyond
 * `keep.scrollTop`, when a live refresh replaces a scrolled matrix) are appended in idle-time
 * chunks after the first paint, so a 100 × 100 matrix never blocks the page for long.
 * `opts.onRerun(cell, selection)`, when given (a sweep's matrix), puts a rerun button on each cell
 * with failed trials; `opts.markdownUrl()` (the API's Markdown of this view) adds "Copy as Markdown";
 * `opts.heat` starts it in the compact heat view (a live refresh keeps the person's choice).
 */
/**
 * `m` with only the rows that hold a failure somewhere (a cell that failed, or that is mixed or
 * flaky), and their cells: where a 600-row matrix shows what needs a look. Pure; `m` is unchanged.
 */
export function failingRows(m) {
  const failing = new Set();
  for (const c of m.cells || [])
    if (c.state === 'failed' || c.state === 'mixed' || c.state === 'flaky') failing.add(JSON.stringify(c.row));
  return {...m, row_keys: (m.row_keys || []).filter((r) => failing.has(JSON.stringify(r))),
    cells: (m.cells || []).filter((c) => failing.has(JSON.stringify(c.row)))};
}

export function matrixView(m, keep = {}, opts = {}) {
  const wrap = h('div', {class: 'matrix-view'});
  if (!m.row_keys?.length || !m.col_keys?.length) {
    wrap.append(h('p', {class: 'muted'}, 'No results yet for this selection.'));
    return wrap;
  }
  wrap.append(...viewOptions(wrap, m, keep, opts), legendOf(m));

  const byKey = new Map();
  for (const c of m.cells || []) byKey.set(keyOf(c.row, c.col), c);
  const rowNames = m.rows || [];
  const nRow = rowNames.length;
  const keyWidths = rowNames.map((name, i) => Math.round(keyPx(m.row_keys.map((r) => r[i]), name)));
  const lefts = keyWidths.map((_, i) => keyWidths.slice(0, i).reduce((a, b) => a + b, 0));
  // Column width from a sample of the cells' texts: roomy for a small matrix, narrower when there are
  // many columns (a cell's text wraps rather than being cut), wide for a single column.
  let longest = 8;
  for (let i = 0; i < Math.min(400, m.cells?.length || 0); i++) longest = Math.max(longest, cellFace(m.cells[i]).text.length + 4);
  const cap = m.col_keys.length === 1 ? 2 * CELL_PX : m.col_keys.length > 6 ? MANY_COLS_PX : CELL_PX;
  const cellPx = Math.round(Math.min(cap, Math.max(110, 24 + 7 * longest)));
  const keysPx = keyWidths.reduce((a, b) => a + b, 0);
  const tpl = (px) => [...keyWidths.map((w) => `${w}px`), `repeat(${m.col_keys.length}, ${px}px)`].join(' ');
  // Where each key column sticks is set once on the grid (--key-left-N, read by app.css) rather
  // than repeated on every key cell of every row.
  const keyCell = (role, i, text) => `<div role="${role}" class="mx-key${i === nRow - 1 ? ' last' : ''}">${esc(text)}</div>`;

  const parts = [`<div class="mx-row mx-head" role="row">`];
  rowNames.forEach((r, i) => parts.push(keyCell('columnheader', i, r)));
  for (const col of m.col_keys) parts.push(`<div role="columnheader" class="mx-col">${esc(col)}</div>`);
  parts.push('</div>');
  const cells = (row, from, to) => {
    const out = [];
    for (let i = from; i < to; i++) out.push(cellHtml(byKey.get(keyOf(row, m.col_keys[i])), !!opts.onRerun));
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
  const vars = {'--tpl': tpl(cellPx), '--grid-w': `${keysPx + cellPx * nCol}px`,
    '--tpl-heat': tpl(HEAT_PX), '--grid-w-heat': `${keysPx + HEAT_PX * nCol}px`};
  lefts.forEach((px, i) => (vars[`--key-left-${i + 1}`] = `${px}px`));
  const grid = h('div', {class: 'mx', role: 'table', 'aria-label': `Verdict per ${rowNames.join(' × ')} and ${m.cols}`,
    'aria-rowcount': m.row_keys.length + 1, vars});
  grid.innerHTML = parts.join('');
  const scroller = h('div', {class: 'matrix-wrap', tabindex: 0, 'aria-label': 'Compatibility matrix, scrollable'}, grid);
  const cellOf = (cell) => {
    const rowEl = cell.parentElement;
    const r = Array.prototype.indexOf.call(grid.children, rowEl) - 1;
    const ci = Array.prototype.indexOf.call(rowEl.children, cell) - nRow;
    return byKey.get(keyOf(m.row_keys[r], m.col_keys[ci]));
  };
  // Tooltips (state, signature, metric, counts, last seen) on first hover or keyboard focus.
  const explain = (e) => {
    const cell = e.target.closest('.mx-cell');
    if (!cell || cell.dataset.titled) return;
    cell.dataset.titled = '1';
    const c = cellOf(cell);
    if (c) (cell.firstElementChild || cell).title = cellTitle(c);
  };
  scroller.addEventListener('mouseover', explain);
  scroller.addEventListener('focusin', explain);
  // One dialog per matrix, filled when a mixed or flaky cell is clicked. A live refresh builds a
  // new matrix; `keep.open` (see scrollOf) reopens the same cell's breakdown from the fresh data.
  const dialog = h('dialog', {class: 'breakdown', 'aria-labelledby': 'breakdown-title', 'data-testid': 'breakdown'});
  const openCell = (c) => {
    fill(dialog, breakdownBody(m, c));
    dialog.cellKey = keyOf(c.row, c.col);
    if (!dialog.open) dialog.showModal();
  };
  scroller.addEventListener('click', (e) => {
    const again = e.target.closest('button.mx-rerun');
    const rc = again && cellOf(again.parentElement);
    if (rc) return void opts.onRerun(rc, cellRerunSelection(m, rc));
    const button = e.target.closest('button.mx-open');
    const c = button && cellOf(button.parentElement);
    if (c) openCell(c);
  });
  dialog.addEventListener('close', () => (dialog.cellKey = null));
  wrap.append(scroller, dialog);
  if (keep.scrollTop || keep.scrollLeft || keep.open) requestAnimationFrame(() => {
    scroller.scrollTo(keep.scrollLeft || 0, keep.scrollTop || 0);
    const c = keep.open && byKey.get(keep.open);
    if (c && opens(c) && wrap.isConnected) openCell(c);
  });
  appendRest(grid, {rows: m.row_keys, rendered: first, firstCols, nCol, rowHtml, restCells: (row, from) => cells(row, from, nCol),
    perChunk: Math.max(1, Math.floor(CHUNK_CELLS / nCol))});
  return wrap;
}

/**
 * Where a matrix inside `box` is scrolled to, which breakdown is open and whether it is in its heat
 * view, so a live refresh keeps the person's place.
 */
export function scrollOf(box) {
  const el = box.querySelector('.matrix-wrap');
  const open = box.querySelector('dialog.breakdown[open]')?.cellKey;
  const view = box.querySelector('.matrix-view');
  return el ? {scrollTop: el.scrollTop, scrollLeft: el.scrollLeft, open, heat: view?.classList.contains('mx-heat')} : {};
}
