// Small DOM helpers: element building, escaping for the string-built hot paths, formatting.

/**
 * h('a', {href: '#/x', class: 'c'}, 'text', childNode, [more]) → Element. Null/false children are skipped.
 * `vars: {'--share': '40%'}` sets custom properties (see setVars).
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'vars') setVars(el, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/**
 * Sets CSS custom properties on an element: the only way a value computed from data (a bar
 * segment's share, a chart series' colour, the matrix's column template) reaches app.css, which
 * owns every fixed look. Anything else is refused, so inline styles cannot come back through here
 * (tests/browser/sources.test.mjs allows this line and no other use of an element's style).
 */
export function setVars(el, vars) {
  for (const [name, value] of Object.entries(vars)) {
    if (!name.startsWith('--')) throw new Error(`setVars: ${name} is not a custom property; give fixed looks a class in app.css`);
    el.style.setProperty(name, String(value));
  }
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const ESC = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
/** Escapes text for the innerHTML paths (the matrix), which are string-built because 10,000 cells must render fast. */
export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ESC[c]);
}

export function fmtNum(v, digits = 3) {
  if (v == null || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  // Grouped by hand: toLocaleString goes through ICU and costs ~20 µs a call, which a matrix
  // of 10,000 throughput cells feels.
  if (a >= 1000) return String(Math.round(v)).replace(/\B(?=(\d{3})+$)/g, ',');
  if (a >= 100) return v.toFixed(0);
  return Number(v.toPrecision(digits)).toString();
}

/** The noun for a count: singular only when the number, as fmtNum prints it, reads "1". */
export function noun(n, one, many = one + 's') {
  return fmtNum(n) === '1' ? one : many;
}

/** "1 trial", "2 trials", "65,536 bytes": every count the dashboard prints with a noun goes through here. */
export function plural(n, one, many = one + 's') {
  return `${fmtNum(n)} ${noun(n, one, many)}`;
}

export function fmtMetric(m) {
  if (!m || m.value == null) return '';
  return `${fmtNum(m.value)}${m.unit ? ' ' + m.unit : ''}`;
}

export function fmtTime(ms) {
  if (!ms) return '–';
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function fmtAgo(ms, now = Date.now()) {
  if (!ms) return '–';
  return fmtSeconds((now - ms) / 1000) + ' ago';
}

export function fmtSeconds(s) {
  if (s == null) return '–';
  if (s < 1) return `${Math.max(0, s).toFixed(2)} s`;
  if (s < 90) return `${s.toFixed(1)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** A config object → "a=x, b=y" for display. */
export function fmtConfig(config) {
  return Object.entries(config || {}).map(([k, v]) => `${k}=${v}`).join(', ');
}

/**
 * A software fingerprint ({framework: "x", cuda: "13.0"}) → "framework x · cuda 13.0". Empty values
 * are left out: a worker that finds no driver or CUDA reports them as "", which is no version.
 */
export function fmtFingerprint(fp, unknown = 'unknown software') {
  if (fp == null || fp === '') return unknown;
  if (typeof fp === 'string') return fp;
  return Object.entries(fp).filter(([, v]) => v != null && v !== '')
    .map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ') || unknown;
}
