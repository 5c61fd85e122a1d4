// A cache of rendered labels, as a library would memoise them: `cached`
// never evicts (a leak, one entry of ~300 B per distinct key); `bounded`
// keeps the 100 most recent. Each call asks for a key never seen before.
let next = 0;
const cache = new Map();
const recent = new Map();
const LIMIT = 100;

const render = (key) => ({ key, label: `item ${key} `.padEnd(300, '.') });

export function cached() {
  const key = `k${next++}`;
  if (!cache.has(key)) cache.set(key, render(key));
  return cache.get(key).label.length;
}

export function bounded() {
  const key = `k${next++}`;
  if (!recent.has(key)) {
    recent.set(key, render(key));
    if (recent.size > LIMIT) recent.delete(recent.keys().next().value);
  }
  return recent.get(key).label.length;
}
