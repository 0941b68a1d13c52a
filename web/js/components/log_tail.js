// A trial's log: the last part at first (a capped log can be megabytes), then new bytes polled
// with ?offset= while the trial runs; stops when the server says X-Trial-Done and nothing is left.

import {request} from '../api.js';
import {h, plural} from '../dom.js';

const FIRST_BYTES = 64 * 1024;
const POLL_MS = 1000;

export function logTail(trial, ctx) {
  const pre = h('pre', {class: 'log', 'data-testid': 'log', tabindex: 0, 'aria-label': `Log of trial ${trial.id}`});
  const status = h('p', {class: 'muted', 'data-testid': 'log-status'});
  const box = h('div', {}, status, pre);
  let offset = Math.max(0, (trial.log_size || 0) - FIRST_BYTES);
  if (offset > 0) pre.append(`… ${plural(offset, 'earlier byte')} not shown (see the raw log) …\n`);
  let stuckToBottom = true;
  pre.addEventListener('scroll', () => {
    stuckToBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
  });

  async function poll() {
    if (!ctx.alive) return;
    let done = false;
    try {
      const res = await request(`/api/v1/trials/${trial.id}/log?offset=${offset}`, {signal: ctx.signal});
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = await res.text();
      const next = Number(res.headers.get('X-Next-Offset'));
      done = res.headers.get('X-Trial-Done') === 'true';
      if (text) {
        pre.append(text);
        if (stuckToBottom) pre.scrollTop = pre.scrollHeight;
      }
      const size = Number(res.headers.get('X-Log-Size'));
      if (Number.isFinite(next)) offset = next;
      if (done && Number.isFinite(size) && offset < size) done = false;  // drain what is left before stopping
      status.textContent = done ? `Log complete (${plural(offset, 'byte')}).` : 'Following the log as the trial runs…';
      status.dataset.state = done ? 'done' : 'following';
    } catch (e) {
      if (!ctx.alive) return;
      status.textContent = `Log unavailable: ${e.message}; retrying.`;
    }
    if (!pre.textContent) pre.textContent = '';
    if (!done && ctx.alive) setTimeout(poll, POLL_MS);
  }
  poll();
  return box;
}
