// REST client: JSON in and out, bearer token from localStorage, and a token prompt on 401.

const TOKEN_KEY = 'gauntlet.token';
let prompting = null;
let declined = false;  // the last prompt was cancelled and no token has been saved since

export function token() {
  return localStorage.getItem(TOKEN_KEY) || '';
}

export function authHeaders(extra = {}) {
  const t = token();
  return t ? {...extra, Authorization: `Bearer ${t}`} : extra;
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

/**
 * Asks the person for a token once, however many requests were refused at the same time; resolves
 * true when one was saved (then `gauntlet:token` is dispatched on window), false when the prompt was
 * cancelled or dismissed (then tokenDeclined() until the next navigation or save) or closed by a
 * navigation (closeTokenPrompt).
 */
export function askToken(message) {
  if (prompting) return prompting;
  const dlg = document.getElementById('token-dialog');
  const input = dlg.querySelector('input');
  dlg.querySelector('.token-why').textContent = message || 'This Gauntlet server needs a token to answer.';
  input.value = token();
  dlg.returnValue = '';
  prompting = new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      const saved = dlg.returnValue === 'save';
      if (saved) localStorage.setItem(TOKEN_KEY, input.value.trim());
      // Closed by a navigation (closeTokenPrompt) is no answer: the next page may ask.
      declined = !saved && dlg.returnValue !== 'navigate';
      prompting = null;
      resolve(saved);
      if (saved) window.dispatchEvent(new Event('gauntlet:token'));
    }, {once: true});
  });
  dlg.showModal();
  return prompting;
}

/**
 * True if the person cancelled the token prompt on this page and saved none since: nothing asks
 * again until they navigate or use the Token button (a page's later requests, the event stream).
 */
export const tokenDeclined = () => declined;

/**
 * For a navigation: closes an open token prompt as cancelled (the request that asked belongs to the
 * page being left, so the prompt must not stay over the next one) and lets the next page's
 * requests ask again.
 */
export function closeTokenPrompt() {
  const dlg = document.getElementById('token-dialog');
  if (dlg?.open) dlg.close('navigate');
  declined = false;
}

/**
 * fetch with the token; on 401 asks for one and tries again (once per new token). A write refused
 * with 403 (a read token asked to rerun, say) asks for a token with more rights the same way.
 */
export async function request(path, init = {}) {
  for (let tries = 0; ; tries++) {
    const res = await fetch(path, {...init, headers: authHeaders(init.headers || {})});
    const write = (init.method || 'GET') !== 'GET';
    if (!(res.status === 401 || (res.status === 403 && write)) || tries > 2) return res;
    // Cancelled on this page: its other requests fail as they are instead of reopening the prompt.
    if (declined) return res;
    const why = res.status === 403 ? 'The saved token may not do this (it needs the submit role). Enter another.'
      : token() ? 'The saved token was refused. Enter another.' : undefined;
    if (!(await askToken(why))) return res;
  }
}

export async function api(path, {method = 'GET', body, signal} = {}) {
  const init = {method, signal, headers: {Accept: 'application/json'}};
  // Every write is JSON, a body or not: a token-less daemon refuses other writes from a page (they are
  // what a cross-site form could send).
  if (method !== 'GET') init.headers['Content-Type'] = 'application/json';
  // A sweep the dashboard makes (a rerun) says it came from here.
  if (method !== 'GET') init.headers['X-Gauntlet-Client'] = 'dashboard';
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await request(path, init);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = {detail: text};
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** Query string from an object, skipping empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v != null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? '?' + s : '';
}
