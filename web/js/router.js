// Hash routing: "#/sweeps/12?rows=a,b&cols=hardware" ⇄ {parts: ['sweeps', '12'], query: URLSearchParams}.
// The hash holds everything on screen, so a copied URL opens the same view.

export function parse(hash = location.hash) {
  const raw = hash.replace(/^#\/?/, '');
  const [path, qs = ''] = raw.split('?');
  return {parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(qs)};
}

/** Builds a hash from path parts and a query object (empty values dropped). */
export function href(parts, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v != null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return '#/' + parts.map(encodeURIComponent).join('/') + (qs ? '?' + qs : '');
}

/** Changes the query of the current view without adding a history entry per keystroke. */
export function setQuery(query, {replace = true} = {}) {
  const cur = parse();
  const next = href(cur.parts, query);
  if (next === location.hash) return;
  if (replace) history.replaceState(null, '', next);
  else history.pushState(null, '', next);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
