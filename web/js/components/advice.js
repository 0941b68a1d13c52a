// Shared by the answer pages (best, check, drift): a config's flags as one line, its metric with the
// spread over its runs, its pass count, the suite picker, and a markdown export to copy.

import {api, qs, request} from '../api.js';
import {fmtNum, h} from '../dom.js';

/** The exact flags of a config as one line: env assignments, then argv pieces (the daemon's order). */
export function flagsText(c) {
  const parts = [...(c.env || []), ...(c.flags || [])];
  return parts.length ? parts.join(' ') : c.config_key;
}

/** "200 tok/s ±4.3 (3 runs)"; '' when the config has no measured run. */
export function metricText(c) {
  const m = c.metric;
  if (!m) return '';
  const spread = m.n > 1 ? ` ±${fmtNum((m.high - m.low) / 2)}` : '';
  return `${fmtNum(m.mean)} ${m.unit || ''}${spread} (${m.n} ${m.n === 1 ? 'run' : 'runs'})`;
}

/** "3/3" and the reused results beside, never inside, the count of runs. */
export function passedText(c) {
  if (!c.pass_rate) return '';
  return `${c.pass_rate.passed}/${c.pass_rate.runs}` + (c.reused ? ` (+${c.reused} reused)` : '');
}

/** What a decision means, in words. */
export const DECISION = {
  beyond_noise: 'faster beyond the noise',
  within_noise: 'within the noise: either will do',
  insufficient_data: 'insufficient data: too few runs to tell them apart',
  only_candidate: 'the only config passing here',
  no_passing_config: 'nothing passes here',
};

/** A <select> of the registered suites; `go(name)` on change. Resolves to [suites, chosen]. */
export async function suitePicker(ctx, chosen, go) {
  const suites = (await api('/api/v1/suites', {signal: ctx.signal})).items;
  const suite = suites.find((s) => s.name === chosen) || suites[0];
  const select = h('select', {name: 'suite', onchange: (e) => go(e.target.value)},
    suites.map((s) => h('option', {value: s.name, selected: s.name === suite?.name}, s.name)));
  return {suites, suite, control: h('label', {}, 'Suite', select)};
}

/** A "Markdown for an issue" box: the daemon's own markdown export of `path` with `params`. */
export async function markdownBox(ctx, path, params) {
  const text = await (await request(path + qs({...params, format: 'markdown'}), {signal: ctx.signal})).text();
  return h('details', {class: 'markdown-export'}, h('summary', {}, 'Markdown for an issue'),
    h('textarea', {readonly: true, rows: 8, 'aria-label': 'Markdown', 'data-testid': 'markdown'}, text));
}
