// The bench's function that slows as it leaks, heavier than the test's
// (tests/targets/functions/plugins.mjs): each call registers a plugin
// whose hook does a thousand steps of work, then runs every hook so far,
// so the 2 500th call of a cycle walks 2 500 hooks more than the first.
// Issue 60's function of this shape spent 218 s on its first cycle of
// 2 500 calls and got no verdict in 400 s.
const hooks = [];

export function register(input = 1) {
  const plugin = { id: hooks.length, name: `plugin-${hooks.length}`, options: { enabled: true } };
  hooks.push((value) => {
    let out = value;
    for (let i = 0; i < 1000; i += 1) out = (out * 31 + plugin.id + i) % 1000003;
    return out;
  });
  let out = input;
  for (const hook of hooks) out = hook(out);
  return out;
}
