// SVG line charts drawn by hand (nothing fetched from outside): series of {x, y} points with
// optional per-point colour (verdict), axes with a few "nice" ticks.

import {fmtNum, fmtTime, setVars} from '../dom.js';

const NS = 'http://www.w3.org/2000/svg';
export const PALETTE = ['#0969da', '#bf3989', '#1a7f37', '#9a6700', '#8250df', '#cf222e', '#0a7f8f', '#57606a'];

function s(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  if (text != null) el.textContent = text;
  return el;
}

function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) || raw;
  const out = [];
  for (let v = Math.floor(lo / step) * step; v < hi + step * 0.999; v += step) out.push(Number(v.toPrecision(12)));
  return {ticks: out, lo: out[0], hi: out[out.length - 1]};
}

// Time axes step in human units (seconds to weeks) and label with what changes across the span.
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800]
  .map((s) => s * 1000);
function timeTicks(lo, hi, n = 5) {
  const step = TIME_STEPS.find((st) => (hi - lo) / st <= n) || TIME_STEPS[TIME_STEPS.length - 1];
  const tz = new Date().getTimezoneOffset() * 60000;  // align day steps to local midnight
  const out = [];
  for (let v = Math.ceil((lo - tz) / step) * step + tz; v <= hi; v += step) out.push(v);
  const f = fmtTime;
  const label = step >= 86400000 ? (t) => f(t).slice(5, 10) : hi - lo > 86400000 ? (t) => f(t).slice(5, 16)
    : step >= 60000 ? (t) => f(t).slice(11, 16) : (t) => f(t).slice(11, 19);
  return {ticks: out, label};
}

/**
 * lineChart({series: [{name, points: [{x, y, color?, title?, href?}]}], xKind: 'time'|'log2'|'linear',
 *            yLabel, xLabel, width, height}) → <figure> with an SVG and a legend.
 */
export function lineChart({series, xKind = 'linear', xLabel = '', yLabel = '', width = 760, height = 280, title}) {
  const fig = document.createElement('figure');
  fig.className = 'chart-figure';
  const pts = series.flatMap((se) => se.points).filter((p) => p.y != null);
  const svg = s('svg', {class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': title || `${yLabel} by ${xLabel}`});
  if (title) svg.append(s('title', {}, title));
  if (!pts.length) {
    svg.append(s('text', {x: width / 2, y: height / 2, 'text-anchor': 'middle'}, 'no measurements to draw'));
    fig.append(svg);
    return fig;
  }
  const m = {l: 64, r: 16, t: 14, b: 40};
  const fx = xKind === 'log2' ? (x) => Math.log2(x) : (x) => x;
  const xs = pts.map((p) => fx(p.x));
  let xlo = Math.min(...xs);
  let xhi = Math.max(...xs);
  if (xhi === xlo) {
    const pad = xKind === 'time' ? 60000 : 1;
    xlo -= pad;
    xhi += pad;
  }
  const xpad = (xhi - xlo) * 0.04;  // keep end points off the axes
  xlo -= xpad;
  xhi += xpad;
  const y = niceTicks(Math.min(0, ...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y)));
  const X = (x) => m.l + ((fx(x) - xlo) / (xhi - xlo)) * (width - m.l - m.r);
  const Y = (v) => height - m.b - ((v - y.lo) / (y.hi - y.lo)) * (height - m.t - m.b);

  const grid = s('g', {class: 'grid'});
  const axis = s('g', {class: 'axis'});
  for (const t of y.ticks) {
    grid.append(s('line', {x1: m.l, x2: width - m.r, y1: Y(t), y2: Y(t)}));
    axis.append(s('text', {x: m.l - 6, y: Y(t) + 4, 'text-anchor': 'end'}, fmtNum(t)));
  }
  let xticks;
  let xlabel = fmtNum;
  if (xKind === 'log2') xticks = [...new Set(pts.map((p) => p.x))].sort((a, b) => a - b);
  else if (xKind === 'time') {
    ({ticks: xticks, label: xlabel} = timeTicks(xlo, xhi));
    // Runs closer together than one step: label the first and the last run instead.
    if (xticks.length < 2) xticks = [...new Set([Math.min(...xs), Math.max(...xs)])];
  }
  else xticks = niceTicks(xlo, xhi, 6).ticks.filter((t) => t >= xlo && t <= xhi);
  for (const t of xticks) axis.append(s('text', {x: X(t), y: height - m.b + 16, 'text-anchor': 'middle'}, xlabel(t)));
  axis.append(s('line', {x1: m.l, x2: width - m.r, y1: height - m.b, y2: height - m.b}));
  axis.append(s('line', {x1: m.l, x2: m.l, y1: m.t, y2: height - m.b}));
  if (xLabel) axis.append(s('text', {x: (m.l + width - m.r) / 2, y: height - 6, 'text-anchor': 'middle'}, xLabel));
  if (yLabel) axis.append(s('text', {x: 12, y: (m.t + height - m.b) / 2, 'text-anchor': 'middle',
    transform: `rotate(-90 12 ${(m.t + height - m.b) / 2})`}, yLabel));
  svg.append(grid, axis);

  const legend = document.createElement('div');
  legend.className = 'chart-legend';
  series.forEach((se, i) => {
    const color = se.color || PALETTE[i % PALETTE.length];
    const ps = se.points.filter((p) => p.y != null).sort((a, b) => fx(a.x) - fx(b.x));
    if (ps.length > 1)
      svg.append(s('polyline', {fill: 'none', stroke: color, 'stroke-width': 2,
        points: ps.map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(' ')}));
    for (const p of ps) {
      const dot = s('circle', {cx: X(p.x).toFixed(1), cy: Y(p.y).toFixed(1), r: 4, fill: p.color || color,
        stroke: '#fff', 'stroke-width': 1.5, 'data-series': se.name});
      dot.append(s('title', {}, p.title || `${se.name}: ${fmtNum(p.y)}`));
      if (p.href) {
        const a = s('a', {href: p.href});
        a.append(dot);
        svg.append(a);
      } else svg.append(dot);
    }
    const item = document.createElement('span');
    const sw = document.createElement('i');
    setVars(sw, {'--series': color});  // the series' colour is data (PALETTE or the caller's)
    item.append(sw, se.name);
    legend.append(item);
  });
  fig.append(svg, legend);
  return fig;
}
