// A trial's test cases as its test runner reported them (GET /api/v1/trials/{id} `tests`): counts by
// verdict, then one row per case, the ones that did not pass first.

import {fmtSeconds, h} from '../dom.js';
import {verdictClass, verdictLabel} from '../verdict.js';

const badge = (v) => h('span', {class: `badge ${verdictClass(v)}`}, verdictLabel(v));

export function testsSection(tests) {
  if (!tests || !tests.cases?.length) return null;
  const counts = Object.entries(tests.counts || {}).map(([v, n]) => h('span', {class: 'tests-count'}, badge(v), ` ${n}`));
  const order = (c) => (c.verdict === 'passed' ? 1 : 0);
  const cases = [...tests.cases].sort((a, b) => order(a) - order(b));
  const note = tests.not_stored ? h('p', {class: 'muted'}, `${tests.not_stored} more cases were reported than are stored (${tests.stored}).`) : null;
  return h('section', {'data-testid': 'tests'},
    h('h2', {}, `Tests (${tests.total})`),
    h('p', {class: 'row'}, counts),
    note,
    h('table', {class: 'list medium', 'aria-label': 'Tests'},
      h('thead', {}, h('tr', {}, ['Test', 'Outcome', 'Verdict', 'Seconds', 'Signature'].map((t, i) => h('th', {scope: 'col', class: i === 3 ? 'num' : null}, t)))),
      h('tbody', {}, cases.map((c) => h('tr', {'data-test': c.name, title: c.evidence || ''},
        h('td', {class: 'mono'}, c.name),
        h('td', {}, c.outcome),
        h('td', {}, badge(c.verdict)),
        h('td', {class: 'num'}, c.seconds != null ? fmtSeconds(c.seconds) : ''),
        h('td', {class: 'mono'}, c.signature || ''))))));
}
