// Node module hooks for the dashboard's helpers under Node: web/js/verdict.js (and a page) imports
// vocabulary.js, which exists only as the daemon's answer (GET /web/js/vocabulary.js, generated
// from core/verdict.cc). This resolves it to the text a real daemon served, given at register().
let source = '';

export async function initialize(data) {
  source = data.source;
}

export async function resolve(specifier, context, next) {
  // verdict.js's ./vocabulary.js, and a page's ../vocabulary.js (pages/trial.js reads BASES).
  if (/^\.\.?\/vocabulary\.js$/.test(specifier) && context.parentURL?.includes('/web/js/'))
    return {url: 'gauntlet:vocabulary', shortCircuit: true};
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url === 'gauntlet:vocabulary') return {format: 'module', source, shortCircuit: true};
  return next(url, context);
}
