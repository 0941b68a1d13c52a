// Declared against observed (GET /api/v1/drift): where a suite's runs disagree with the support its
// published table declares (PUT /api/v1/suites/{name}/declared) or the framework itself answered (a
// probe stage), disagreements first, with the markdown for an upstream issue. The URL holds the suite.

import {api, ApiError, qs} from '../api.js';
import {fill, h} from '../dom.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';
import {flagsText, markdownBox, metricText, suitePicker} from '../components/advice.js';

const KIND = {
  supported_but_failing: 'declared supported, fails',
  unsupported_but_passing: 'declared unsupported, passes',
  undeclared: 'not declared',
  agrees: 'as declared',
};

/** "unsupported (torch 2.11.0)": what a probe stage heard the framework answer. */
export function frameworkText(f) {
  const who = [f.framework, f.version].filter(Boolean).join(' ');
  return `${f.supported ? 'supported' : 'unsupported'}${who ? ` (${who})` : ''}`;
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const go = (params) => (location.hash = href(['drift'], params));
  const {suite, control} = await suitePicker(ctx, q.get('suite'), (name) => go({suite: name}));
  const head = [h('h1', {}, 'Declared vs observed'), h('div', {class: 'controls'}, control)];
  if (!suite) {
    fill(ctx.main, ...head, h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const params = {suite: suite.name, agrees: q.get('agrees') === '1' ? '1' : ''};
  let d;
  try {
    d = await api('/api/v1/drift' + qs(params), {signal: ctx.signal});
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    fill(ctx.main, ...head, h('p', {class: 'muted', 'data-testid': 'no-declaration'},
      `${suite.name} has no declared support. Register a support table with `, h('code', {}, `gauntlet declare --suite ${suite.name} FILE`),
      ', or give the suite a probe stage that asks the framework.'));
    return;
  }
  if (!ctx.alive) return;
  const s = d.summary;
  const rows = d.items.map((i) => h('tr', {'data-kind': i.kind},
    h('td', {}, KIND[i.kind] || i.kind), h('td', {}, i.hardware), h('td', {}, h('code', {}, flagsText(i))),
    h('td', {}, i.declared ? `${i.declared.supported ? 'supported' : 'unsupported'}${i.declared.note ? ` (${i.declared.note})` : ''}` : ''),
    h('td', {'data-testid': 'framework', title: i.framework?.reason || null}, i.framework ? frameworkText(i.framework) : ''),
    h('td', {}, h('span', {class: `badge ${verdictClass(i.observed.latest.verdict)}`}, verdictLabel(i.observed.latest.verdict)), ' ',
      i.observed.latest.signature ? h('code', {}, i.observed.latest.signature) : '', i.observed.metric ? ` ${metricText(i.observed)}` : ''),
    h('td', {}, h('a', {href: `#/trials/${i.observed.latest.trial}`}, `#${i.observed.latest.trial}`))));
  fill(ctx.main, ...head,
    h('p', {'data-testid': 'drift-summary'}, 'Declared by ',
      d.source ? [h('a', {href: d.source.url, rel: 'noreferrer'}, d.source.url), d.source.version ? ` (version ${d.source.version})` : ''] : '',
      d.framework_claims ? `${d.source ? ' and ' : ''}the framework's own answers (${d.framework_claims} configurations)` : '',
      `: ${s.supported_but_failing} supported but failing, ${s.unsupported_but_passing} unsupported but passing, ${s.undeclared} undeclared, ${s.agrees} as declared. `,
      h('a', {href: href(['drift'], {suite: suite.name, agrees: params.agrees ? '' : '1'})}, params.agrees ? 'Hide agreements' : 'Show agreements')),
    rows.length ? h('table', {class: 'list', 'aria-label': 'Declared against observed', 'data-testid': 'drift-table'},
      h('thead', {}, h('tr', {}, ['Drift', 'Hardware', 'Config', 'Declared', 'Framework', 'Observed', 'Trial'].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, rows)) : h('p', {class: 'muted'}, 'Every observed configuration behaves as declared.'),
    await markdownBox(ctx, '/api/v1/drift', {suite: suite.name}));
}
