// Metrics of a trial: a table, and for per-concurrency metrics ("output_tok_s@c64") a chart of
// the metric against concurrency, which reads faster than a column of numbers.

import {fmtMetric, h} from '../dom.js';
import {lineChart} from './chart.js';

const CHART_ORDER = ['output_tok_s', 'req_s', 'ttft_ms_p50', 'itl_ms_p50', 'ttft_ms_mean', 'itl_ms_mean'];

/** {"output_tok_s@c64": m, ...} → Map(base → [{c, value, unit}]) for metrics with two or more levels. */
export function byConcurrency(metrics) {
  const groups = new Map();
  for (const [name, m] of Object.entries(metrics || {})) {
    const hit = /^(.+)@c(\d+)$/.exec(name);
    if (!hit || m?.value == null) continue;
    if (!groups.has(hit[1])) groups.set(hit[1], []);
    groups.get(hit[1]).push({c: Number(hit[2]), value: m.value, unit: m.unit});
  }
  for (const [k, v] of groups) if (v.length < 2) groups.delete(k);
  return groups;
}

export function metricsTable(metrics) {
  const names = Object.keys(metrics || {}).sort((a, b) => a.localeCompare(b, 'en', {numeric: true}));
  if (!names.length) return h('p', {class: 'muted'}, 'No metrics reported.');
  return h('table', {class: 'list narrow', 'aria-label': 'Metrics'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Metric'), h('th', {scope: 'col', class: 'num'}, 'Value'))),
    h('tbody', {}, names.map((n) => h('tr', {'data-metric': n}, h('td', {class: 'mono'}, n), h('td', {class: 'num'}, fmtMetric(metrics[n]))))));
}

/** Up to `max` charts, one per metric family, each a line over concurrency. */
export function concurrencyCharts(metrics, {max = 2, seriesName = 'this trial'} = {}) {
  const groups = byConcurrency(metrics);
  const bases = [...groups.keys()].sort((a, b) => rank(a) - rank(b)).slice(0, max);
  return bases.map((base) => {
    const pts = groups.get(base);
    const unit = pts[0].unit ? ` (${pts[0].unit})` : '';
    return h('div', {'data-testid': `chart-${base}`},
      h('h3', {}, `${base}${unit} by concurrency`),
      lineChart({series: [{name: seriesName, points: pts.map((p) => ({x: p.c, y: p.value, title: `c=${p.c}: ${p.value}${unit}`}))}],
        xKind: 'log2', xLabel: 'concurrency', yLabel: base + unit, width: 520, height: 240, title: `${base} by concurrency`}));
  });
}

function rank(base) {
  const i = CHART_ORDER.indexOf(base);
  return i < 0 ? 99 : i;
}
