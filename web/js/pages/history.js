// One config over time, per hardware class and fingerprint: its verdicts, a chart of the key
// metric, and throughput by concurrency of the latest passing run on each hardware class.

import {api, qs} from '../api.js';
import {fill, fmtFingerprint, fmtMetric, fmtTime, h} from '../dom.js';
import {lineChart, PALETTE} from '../components/chart.js';
import {byConcurrency} from '../components/metrics.js';
import {href} from '../router.js';
import {shortReason, verdictClass, verdictFamily, verdictLabel} from '../verdict.js';

const DOT = {ok: '#1a7f37', warn: '#9a6700', bad: '#cf222e', infra: '#8250df', none: '#8c959f'};

/** "a=x&b=y" → {a: 'x', b: 'y'}; the daemon joins sorted name=value pairs with '&' as they are. */
export function parseKey(key) {
  const out = {};
  for (const part of (key || '').split('&')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}
export const makeKey = (config) => Object.keys(config).sort().map((k) => `${k}=${config[k]}`).join('&');

const fpText = fmtFingerprint;

function configPicker(suite, config, onChange) {
  const box = h('div', {class: 'controls'});
  for (const [name, decl] of Object.entries(suite.parameters || {})) {
    const cur = config[name] ?? (Array.isArray(decl) ? decl[0] : decl?.default ?? '');
    config[name] = cur;
    const input = Array.isArray(decl)
      ? h('select', {name}, decl.map((v) => h('option', {value: v, selected: String(v) === String(cur)}, String(v))))
      : h('input', {name, value: cur, size: 12});
    input.addEventListener('change', () => onChange({...config, [name]: input.value}));
    box.append(h('label', {}, name, input));
  }
  return box;
}

function pointsTable(series) {
  return h('table', {class: 'list', 'aria-label': 'Runs of this config'},
    h('thead', {}, h('tr', {}, ['When', 'Hardware', 'Software', 'Verdict', 'Reason', 'Metric', 'Trial'].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, series.flatMap((s) => s.points.slice().reverse().map((p) => h('tr', {},
      h('td', {}, fmtTime(p.finished_at)), h('td', {}, s.hardware), h('td', {class: 'mono'}, fpText(s.fingerprint)),
      h('td', {}, h('span', {class: `badge ${verdictClass(p.verdict)}`}, verdictLabel(p.verdict))),
      h('td', {title: p.signature || ''}, p.signature ? shortReason(p.verdict, p.signature) : ''),
      h('td', {}, p.metric ? `${fmtMetric(p.metric)}` : ''),
      h('td', {}, h('a', {href: `#/trials/${p.trial}`}, `#${p.trial}`)))))));
}

async function throughputChart(series, ctx) {
  // The latest passing run per hardware class carries the per-concurrency metrics.
  const latest = new Map();
  for (const s of series)
    for (const p of s.points)
      if (p.verdict === 'passed' && (!latest.has(s.hardware) || latest.get(s.hardware).finished_at < p.finished_at)) latest.set(s.hardware, p);
  const trials = await Promise.all([...latest.entries()].map(async ([hw, p]) => [hw, await api(`/api/v1/trials/${p.trial}`, {signal: ctx.signal})]));
  const lines = [];
  let unit = '';
  for (const [hw, t] of trials) {
    const pts = byConcurrency(t.result?.metrics).get('output_tok_s');
    if (!pts) continue;
    unit = pts[0].unit || unit;
    lines.push({name: hw, points: pts.map((p) => ({x: p.c, y: p.value, title: `${hw}, c=${p.c}: ${p.value} ${p.unit || ''}`, href: `#/trials/${t.id}`}))});
  }
  if (!lines.length) return null;
  return h('section', {'data-testid': 'throughput-chart'}, h('h2', {}, 'Throughput by concurrency'),
    h('p', {class: 'muted'}, 'Latest passing run on each hardware class.'),
    lineChart({series: lines, xKind: 'log2', xLabel: 'concurrent requests', yLabel: `output tokens/s`, title: 'Output tokens per second by concurrency'}));
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const suites = (await api('/api/v1/suites', {signal: ctx.signal})).items;
  const suite = suites.find((s) => s.name === q.get('suite')) || suites[0];
  if (!suite) {
    fill(ctx.main, h('h1', {}, 'History'), h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const config = parseKey(q.get('config'));
  const go = (c) => (location.hash = href(['history'], {suite: suite.name, config: makeKey(c)}));
  const picker = configPicker(suite, config, go);
  picker.prepend(h('label', {}, 'Suite', h('select', {name: 'suite', onchange: (e) => (location.hash = href(['history'], {suite: e.target.value}))},
    suites.map((s) => h('option', {value: s.name, selected: s.name === suite.name}, s.name)))));
  const key = makeKey(config);
  const body = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  fill(ctx.main, h('h1', {}, 'History'), h('p', {class: 'muted'}, 'One configuration over time, per hardware class and software fingerprint.'),
    picker, h('p', {}, h('code', {'data-testid': 'config-key'}, key)), body);

  const data = await api('/api/v1/history' + qs({suite: suite.name, config: key}), {signal: ctx.signal});
  if (!ctx.alive) return;
  const series = data.items || [];
  if (!series.length) {
    fill(body, h('p', {class: 'muted', 'data-testid': 'no-history'}, 'This config has not run yet.'));
    return;
  }
  const metricName = series.flatMap((s) => s.points).find((p) => p.metric)?.metric?.name;
  const chartSeries = series.map((s, i) => ({
    name: `${s.hardware} · ${fpText(s.fingerprint)}`, color: PALETTE[i % PALETTE.length],
    // Dots take the series colour; only a run that did not pass (but still measured) stands out.
    points: s.points.filter((p) => p.metric).map((p) => ({x: p.finished_at, y: p.metric.value,
      color: p.verdict === 'passed' ? null : DOT[verdictFamily(p.verdict)],
      title: `${fmtTime(p.finished_at)} ${verdictLabel(p.verdict)} ${fmtMetric(p.metric)}`, href: `#/trials/${p.trial}`})),
  }));
  const parts = [];
  if (metricName)
    parts.push(h('section', {'data-testid': 'metric-chart'}, h('h2', {}, `${metricName} over time`),
      lineChart({series: chartSeries, xKind: 'time', xLabel: 'finished', yLabel: metricName, title: `${metricName} over time`})));
  parts.push(h('h2', {}, 'Runs'), pointsTable(series));
  fill(body, parts);
  const tput = await throughputChart(series, ctx).catch(() => null);
  if (tput && ctx.alive) body.insertBefore(tput, body.children[1] || null);
}
