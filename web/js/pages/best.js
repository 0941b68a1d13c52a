// What to run here (GET /api/v1/recommend): per hardware class, and per region of the parameters
// the person splits by (shape, batch...), the fastest configuration that passed with confidence, its
// runner-up and whether the gap is larger than the noise. The URL holds suite and split.

import {api, qs} from '../api.js';
import {fill, h} from '../dom.js';
import {href} from '../router.js';
import {DECISION, flagsText, markdownBox, metricText, passedText, suitePicker} from '../components/advice.js';

const regionText = (r) => Object.entries(r || {}).map(([k, v]) => `${k}=${v}`).join(' ') || 'all';

function configCell(suite, item, c) {
  if (!c) return h('td', {class: 'muted'}, 'none passes');
  return h('td', {},
    h('code', {'data-testid': 'flags'}, flagsText(c)), ' ',
    h('a', {href: href(['check'], {suite, hardware: item.hardware, config: c.config_key}), title: 'Check this configuration'}, 'check'), ' ',
    h('a', {href: `#/trials/${c.trial}`, title: 'The latest run'}, `#${c.trial}`));
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const by = (q.get('by') || '').split(',').filter(Boolean);
  const go = (params) => (location.hash = href(['best'], params));
  const {suite, control} = await suitePicker(ctx, q.get('suite'), (name) => go({suite: name}));
  if (!suite) {
    fill(ctx.main, h('h1', {}, 'Best per hardware'), h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const split = h('fieldset', {class: 'controls'}, h('legend', {}, 'Split by'),
    Object.keys(suite.parameters || {}).map((p) => h('label', {},
      h('input', {type: 'checkbox', name: 'by', value: p, checked: by.includes(p),
        onchange: (e) => go({suite: suite.name, by: (e.target.checked ? [...by, p] : by.filter((x) => x !== p)).join(',')})}), p)));
  const params = {suite: suite.name, by: by.join(',')};
  const data = await api('/api/v1/recommend' + qs(params), {signal: ctx.signal});
  if (!ctx.alive) return;
  const rows = data.items.map((i) => h('tr', {'data-hardware': i.hardware, 'data-region': regionText(i.region), 'data-decision': i.decision},
    h('td', {}, i.hardware), h('td', {}, regionText(i.region)), configCell(suite.name, i, i.best),
    h('td', {}, i.best ? metricText(i.best) : ''), h('td', {}, i.best ? passedText(i.best) : ''),
    i.runner_up ? h('td', {}, h('code', {}, flagsText(i.runner_up)), ' ', metricText(i.runner_up)) : h('td', {}),
    h('td', {title: i.decision}, DECISION[i.decision] || i.decision),
    h('td', {}, i.best ? i.best.evidence : '')));
  const table = rows.length
    ? h('table', {class: 'list', 'aria-label': 'Best configuration per hardware', 'data-testid': 'best-table'},
      h('thead', {}, h('tr', {}, ['Hardware', 'Region', 'Run', 'Metric', 'Passed', 'Runner-up', 'Decision', 'Evidence'].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, rows))
    : h('p', {class: 'muted', 'data-testid': 'no-runs'}, `No runs of ${suite.name} to judge yet.`);
  fill(ctx.main, h('h1', {}, 'Best per hardware'),
    h('p', {class: 'muted'}, `Passed with confidence: every real run passed, or the 95% pass-rate interval starts at ${data.confident_low * 100}% or more. Reused results are not runs.`),
    h('div', {class: 'controls'}, control, h('a', {href: href(['check'], {suite: suite.name})}, 'Will this work?'), ' ',
      h('a', {href: href(['drift'], {suite: suite.name})}, 'Declared vs observed')),
    split, table, rows.length ? await markdownBox(ctx, '/api/v1/recommend', params) : null);
}
