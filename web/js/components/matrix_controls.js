// Row and column pickers for a matrix: rows are one or two parameters, columns `hardware` or a parameter.

import {h} from '../dom.js';

/**
 * params: parameter names; value: {rows: [a, b?], cols}; onChange({rows, cols}).
 * Returns the <div class="controls"> fragment (callers may add more controls to it).
 */
export function matrixControls(params, value, onChange) {
  const opt = (v, label, sel) => h('option', {value: v, selected: sel}, label);
  const row1 = h('select', {name: 'row1'}, params.map((p) => opt(p, p, p === value.rows[0])));
  const row2 = h('select', {name: 'row2'}, opt('', '—', !value.rows[1]), params.map((p) => opt(p, p, p === value.rows[1])));
  const cols = h('select', {name: 'cols'}, opt('hardware', 'hardware class', value.cols === 'hardware'),
    params.map((p) => opt(p, p, p === value.cols)));
  const changed = () => {
    const rows = [row1.value, row2.value].filter((v, i, a) => v && a.indexOf(v) === i && v !== cols.value);
    onChange({rows: rows.length ? rows : [row1.value], cols: cols.value});
  };
  for (const s of [row1, row2, cols]) s.addEventListener('change', changed);
  return h('div', {class: 'controls'},
    h('label', {}, 'Rows', row1), h('label', {}, 'then by', row2), h('label', {}, 'Columns', cols));
}

/** Parameter values a sweep used: its request's lists, else every declared value of the suite. */
export function sweepValues(suite, sweep) {
  const out = {};
  const req = sweep?.request?.parameters || {};
  // In the order the suite declared them (the daemon's JSON objects come sorted by name).
  const params = suite?.parameters || {};
  const names = (suite?.parameter_order || []).filter((n) => n in params);
  for (const n of Object.keys(params)) if (!names.includes(n)) names.push(n);
  for (const name of names) {
    const decl = params[name];
    if (Array.isArray(req[name])) out[name] = req[name];
    else if (req[name] != null) out[name] = [req[name]];
    else if (Array.isArray(decl)) out[name] = decl;
    else out[name] = decl && decl.default != null ? [decl.default] : [];
  }
  return out;
}

/**
 * Default layout: the parameters that vary (most values first) as rows; hardware as columns when
 * the sweep has several targets, otherwise the second varying parameter.
 */
export function defaultLayout(values, targets = 1) {
  const varying = Object.keys(values).filter((k) => values[k].length > 1).sort((a, b) => values[b].length - values[a].length);
  if (!varying.length) return {rows: Object.keys(values).slice(0, 1), cols: 'hardware'};
  if (targets > 1 || varying.length < 2) return {rows: varying.slice(0, 2), cols: 'hardware'};
  return {rows: [varying[0]], cols: varying[1]};
}
