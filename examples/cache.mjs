// leakcheck's function demo, for `leakcheck fn`:
//
//   leakcheck fn examples/cache.mjs#remember   keeps every page it renders (a leak)
//   leakcheck fn examples/cache.mjs#recent     keeps the last 100 (bounded, clean)
//
// Each call renders a new key, as a server renders a new id: a cache that
// never forgets grows by one entry a call.

const pages = new Map();
const recentPages = new Map();
const RECENT_LIMIT = 100;
let calls = 0;

function render(key) {
  return { key, html: `<h1>${key}</h1>`.padEnd(256, ' '), at: Date.now() };
}

export function remember() {
  calls += 1;
  const key = `page-${calls}`;
  if (!pages.has(key)) pages.set(key, render(key));
  return pages.get(key);
}

export function recent() {
  calls += 1;
  const key = `page-${calls}`;
  recentPages.set(key, render(key));
  if (recentPages.size > RECENT_LIMIT) {
    recentPages.delete(recentPages.keys().next().value);
  }
  return recentPages.get(key);
}
