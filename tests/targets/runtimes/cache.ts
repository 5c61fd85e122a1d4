// Functions for `leakcheck fn --runtime deno|bun` (tests/it/runtimes.rs):
// `remember` keeps every page it renders in a module-level Map (a leak),
// `recent` keeps the last RECENT (clean).

interface Page {
  key: string;
  html: string;
}

const RECENT = 50;
let calls = 0;

const pages = new Map<string, Page>();
const latest = new Map<string, Page>();

function render(key: string): Page {
  return { key, html: `<p>${key}</p>`.repeat(8) };
}

export function remember(): number {
  calls += 1;
  const key = `page-${calls}`;
  pages.set(key, render(key));
  return pages.size;
}

export function recent(): number {
  calls += 1;
  const key = `page-${calls}`;
  latest.set(key, render(key));
  if (latest.size > RECENT) latest.delete(latest.keys().next().value as string);
  return latest.size;
}
