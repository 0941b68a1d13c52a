// The daemon's Server-Sent Events, read with fetch rather than EventSource because EventSource
// cannot send an Authorization header. Events are delivered in batches (every BATCH_MS at most) so
// a burst of 10,000 trial changes costs subscribers a handful of calls, not 10,000.

import {authHeaders, askToken, tokenDeclined} from './api.js';

const BATCH_MS = 250;
const subscribers = new Set();
let pending = [];
let flushTimer = 0;
let lastId = 0;
let state = 'connecting';

export function onEvents(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

export function liveState() {
  return state;
}

function setState(s) {
  state = s;
  const el = document.getElementById('live');
  if (!el) return;
  el.dataset.state = s;
  el.textContent = s === 'live' ? '● live' : s === 'connecting' ? '○ connecting' : s === 'locked' ? '○ needs a token' : '○ offline, retrying';
  el.title = s === 'live' ? 'receiving live updates from the server'
    : s === 'locked' ? 'live updates wait for a token (the Token button)' : 'live updates paused; pages show what they last fetched';
}

function deliver(ev) {
  pending.push(ev);
  if (flushTimer) return;
  flushTimer = setTimeout(() => {
    flushTimer = 0;
    const batch = pending;
    pending = [];
    for (const fn of subscribers) {
      try {
        fn(batch);
      } catch (e) {
        console.error('event subscriber failed', e);
      }
    }
  }, BATCH_MS);
}

function parseFrame(frame) {
  let type = 'message';
  const data = [];
  let id = null;
  for (const line of frame.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (id) lastId = Number(id) || lastId;
  if (!data.length) return null;
  try {
    return {type, ...JSON.parse(data.join('\n'))};
  } catch {
    return null;
  }
}

export async function startEvents() {
  for (;;) {
    setState('connecting');
    try {
      const headers = authHeaders({Accept: 'text/event-stream'});
      if (lastId) headers['Last-Event-ID'] = String(lastId);
      const res = await fetch('/api/v1/events', {headers, cache: 'no-store'});
      if (res.status === 401) {
        // A cancelled prompt is an answer: the stream waits for a token to be saved (by a page's
        // prompt or the Token button) instead of asking again at once, which kept the dialog open.
        if (tokenDeclined() || !(await askToken())) {
          setState('locked');
          await new Promise((r) => window.addEventListener('gauntlet:token', r, {once: true}));
        }
        continue;
      }
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      setState('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const ev = parseFrame(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (ev) deliver(ev);
        }
      }
    } catch (e) {
      console.warn('event stream lost', e);
    }
    setState('offline');
    // A dropped stream may have missed events: tell pages to refetch what they show.
    deliver({type: 'reconnect'});
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Calls fn at most once per `ms`, and always once after the last call: the refetch pattern for
 * live pages (the server aggregates; a page refetches one summary, not each trial).
 */
export function throttle(fn, ms = 700) {
  let last = 0;
  let timer = 0;
  let stopped = false;
  const run = () => {
    timer = 0;
    last = Date.now();
    if (!stopped) fn();
  };
  const t = () => {
    if (timer || stopped) return;
    timer = setTimeout(run, Math.max(0, last + ms - Date.now()));
  };
  t.stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  return t;
}
