// What the kernel recorder saw in a trial (issue 30; docs/KERNELS.md "Kernel recorder"): the
// dispatch check of each stage, the record's totals and the top kernels by GPU time.

import {h} from '../dom.js';

const ms = (ns) => (ns / 1e6).toFixed(ns >= 1e7 ? 1 : 3);

// The "Kernels" section for trial `t`, or null when the trial was not recorded.
export function kernelsSection(t) {
  const k = t.kernels;
  if (!k) return null;
  const checks = (t.result?.stages || []).filter((s) => s.dispatch).map((s) => {
    const d = s.dispatch;
    const what = d.status === 'verified' ? `ran ${d.matched}` : d.status === 'fallback' ? `carried by ${d.family}` : d.reason;
    return h('li', {'data-testid': 'dispatch', 'data-status': d.status},
      h('strong', {}, `dispatch ${d.status}`), ` (${s.name}: ${d.param}=${d.value} expects /${d.pattern}/): `, what || '');
  });
  const totals = `${k.processes} process(es), ${k.distinct} kernel(s), ${k.launches} launch(es), ${ms(k.gpu_ns || 0)} ms on the GPU` +
    (k.complete ? '' : ' — incomplete record') + (k.dropped ? `, ${k.dropped} dropped` : '') +
    (k.names_dropped ? `, ${k.names_dropped} past the name cap` : '');
  return h('section', {'data-testid': 'kernels'},
    h('h2', {}, 'Kernels'),
    checks.length ? h('ul', {}, checks) : null,
    h('p', {class: 'muted'}, totals, k.carrying_family ? ` · carried by ${k.carrying_family}` : ''),
    (k.problems || []).length ? h('p', {class: 'muted'}, k.problems.join('; ')) : null,
    h('table', {class: 'list medium', 'aria-label': 'Kernels'},
      h('thead', {}, h('tr', {}, ['Family', 'Kernel', 'Launches', 'Total ms', 'Max ms'].map((c, i) => h('th', {scope: 'col', class: i >= 2 ? 'num' : null}, c)))),
      h('tbody', {}, (k.top || []).map((x) => h('tr', {},
        h('td', {}, x.family), h('td', {class: 'mono', title: x.name}, x.name.length > 120 ? `${x.name.slice(0, 120)}…` : x.name),
        h('td', {class: 'num'}, String(x.count)), h('td', {class: 'num'}, ms(x.total_ns)), h('td', {class: 'num'}, ms(x.max_ns)))))),
    k.omitted ? h('p', {class: 'muted'}, `${k.omitted} more kernel(s) not stored`) : null);
}
